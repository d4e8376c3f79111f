CMakeFiles/optbench_lib.dir/results/store.c.o: /work/main/results/store.c \
 /usr/include/stdc-predef.h
