# Empty dependencies file for optbench.
# This may be replaced when dependencies are built.
