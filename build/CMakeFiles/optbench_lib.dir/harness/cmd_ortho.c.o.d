CMakeFiles/optbench_lib.dir/harness/cmd_ortho.c.o: \
 /work/main/harness/cmd_ortho.c /usr/include/stdc-predef.h \
 /work/main/harness/commands.h
