/* kernels/cuda/module.h - what the program and its CUDA backend module
 * agree on (kernels/cuda/load.c loads it; backend_cuda.cu defines the
 * entry).
 *
 * The module exports one function, OB_CUDA_MODULE_ENTRY: given the
 * program's build stamp and the sizes of the tables they share, it returns
 * its backend table, or NULL when the module is another build's (a table
 * laid out otherwise would be read wrong). */
#ifndef OB_KERNELS_CUDA_MODULE_H
#define OB_KERNELS_CUDA_MODULE_H

#include <stddef.h>

#include "kernels/backend.h"
#include "ob_git_rev.h" /* generated at build time (cmake/git_rev.cmake) */

#ifdef __cplusplus
extern "C" {
#endif

#define OB_CUDA_MODULE_ENTRY "ob_cuda_module_ops"
/* The version and source revision, as both were built (ob_git_rev.h) */
#define OB_CUDA_MODULE_STAMP (OB_VERSION " " OB_GIT_REV)

typedef const ob_backend_ops *ob_cuda_module_fn(const char *stamp, size_t ops_size, size_t device_size);

#ifdef __cplusplus
}
#endif

#endif
