file(REMOVE_RECURSE
  "CMakeFiles/optbench.dir/harness/main.c.o"
  "CMakeFiles/optbench.dir/harness/main.c.o.d"
  "optbench"
  "optbench.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/optbench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
