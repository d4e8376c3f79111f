CMakeFiles/optbench_lib.dir/harness/cmd_run.c.o: \
 /work/main/harness/cmd_run.c /usr/include/stdc-predef.h \
 /work/main/harness/commands.h
