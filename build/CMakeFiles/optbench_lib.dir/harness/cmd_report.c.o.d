CMakeFiles/optbench_lib.dir/harness/cmd_report.c.o: \
 /work/main/harness/cmd_report.c /usr/include/stdc-predef.h \
 /work/main/harness/commands.h
