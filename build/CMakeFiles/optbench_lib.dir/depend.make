# Empty dependencies file for optbench_lib.
# This may be replaced when dependencies are built.
