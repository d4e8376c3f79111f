file(REMOVE_RECURSE
  "liboptbench.a"
)
