CMakeFiles/optbench_lib.dir/harness/cmd_replay.c.o: \
 /work/main/harness/cmd_replay.c /usr/include/stdc-predef.h \
 /work/main/harness/commands.h
