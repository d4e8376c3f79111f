# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[test_core]=] "/work/main/build/tests/test_core")
set_tests_properties([=[test_core]=] PROPERTIES  ENVIRONMENT "OB_SOURCE_DIR=/work/main;OMP_NUM_THREADS=2" LABELS "unit" SKIP_RETURN_CODE "77" TIMEOUT "600" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;13;add_test;/work/main/tests/CMakeLists.txt;0;")
