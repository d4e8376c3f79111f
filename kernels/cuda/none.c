/* kernels/cuda/none.c - stands in for the CUDA backend in builds without it. */
#include "kernels/backend.h"

const ob_backend_ops *ob_cuda_backend_ops(void)
{
    return NULL;
}
