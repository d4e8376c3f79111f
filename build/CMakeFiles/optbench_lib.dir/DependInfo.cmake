
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/core/hparams.c" "CMakeFiles/optbench_lib.dir/core/hparams.c.o" "gcc" "CMakeFiles/optbench_lib.dir/core/hparams.c.o.d"
  "/work/main/core/layout.c" "CMakeFiles/optbench_lib.dir/core/layout.c.o" "gcc" "CMakeFiles/optbench_lib.dir/core/layout.c.o.d"
  "/work/main/core/ob.c" "CMakeFiles/optbench_lib.dir/core/ob.c.o" "gcc" "CMakeFiles/optbench_lib.dir/core/ob.c.o.d"
  "/work/main/harness/cli_util.c" "CMakeFiles/optbench_lib.dir/harness/cli_util.c.o" "gcc" "CMakeFiles/optbench_lib.dir/harness/cli_util.c.o.d"
  "/work/main/harness/cmd_ortho.c" "CMakeFiles/optbench_lib.dir/harness/cmd_ortho.c.o" "gcc" "CMakeFiles/optbench_lib.dir/harness/cmd_ortho.c.o.d"
  "/work/main/harness/cmd_replay.c" "CMakeFiles/optbench_lib.dir/harness/cmd_replay.c.o" "gcc" "CMakeFiles/optbench_lib.dir/harness/cmd_replay.c.o.d"
  "/work/main/harness/cmd_report.c" "CMakeFiles/optbench_lib.dir/harness/cmd_report.c.o" "gcc" "CMakeFiles/optbench_lib.dir/harness/cmd_report.c.o.d"
  "/work/main/harness/cmd_run.c" "CMakeFiles/optbench_lib.dir/harness/cmd_run.c.o" "gcc" "CMakeFiles/optbench_lib.dir/harness/cmd_run.c.o.d"
  "/work/main/kernels/cpu/backend_cpu.c" "CMakeFiles/optbench_lib.dir/kernels/cpu/backend_cpu.c.o" "gcc" "CMakeFiles/optbench_lib.dir/kernels/cpu/backend_cpu.c.o.d"
  "/work/main/kernels/cpu/testfns_cpu.c" "CMakeFiles/optbench_lib.dir/kernels/cpu/testfns_cpu.c.o" "gcc" "CMakeFiles/optbench_lib.dir/kernels/cpu/testfns_cpu.c.o.d"
  "/work/main/kernels/device.c" "CMakeFiles/optbench_lib.dir/kernels/device.c.o" "gcc" "CMakeFiles/optbench_lib.dir/kernels/device.c.o.d"
  "/work/main/optimizers/adam.c" "CMakeFiles/optbench_lib.dir/optimizers/adam.c.o" "gcc" "CMakeFiles/optbench_lib.dir/optimizers/adam.c.o.d"
  "/work/main/optimizers/pipeline.c" "CMakeFiles/optbench_lib.dir/optimizers/pipeline.c.o" "gcc" "CMakeFiles/optbench_lib.dir/optimizers/pipeline.c.o.d"
  "/work/main/optimizers/sgd.c" "CMakeFiles/optbench_lib.dir/optimizers/sgd.c.o" "gcc" "CMakeFiles/optbench_lib.dir/optimizers/sgd.c.o.d"
  "/work/main/results/store.c" "CMakeFiles/optbench_lib.dir/results/store.c.o" "gcc" "CMakeFiles/optbench_lib.dir/results/store.c.o.d"
  "/work/main/workloads/quadratic.c" "CMakeFiles/optbench_lib.dir/workloads/quadratic.c.o" "gcc" "CMakeFiles/optbench_lib.dir/workloads/quadratic.c.o.d"
  "/work/main/workloads/registry.c" "CMakeFiles/optbench_lib.dir/workloads/registry.c.o" "gcc" "CMakeFiles/optbench_lib.dir/workloads/registry.c.o.d"
  "/work/main/workloads/rosenbrock.c" "CMakeFiles/optbench_lib.dir/workloads/rosenbrock.c.o" "gcc" "CMakeFiles/optbench_lib.dir/workloads/rosenbrock.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
