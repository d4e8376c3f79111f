/* kernels/cuda/blas_cuda.cu - matrix products through cuBLAS.
 *
 * backend.h speaks row-major: C(m,n) = alpha op(A)(m,k) op(B)(k,n) + beta C.
 * cuBLAS is column-major, and a row-major matrix read column-major is its
 * transpose, so we ask cuBLAS for C^T(n,m) = op(B)^T(n,k) op(A)^T(k,m): the
 * operands swap places, the transpose flags stay with their operand, and the
 * leading dimensions are the row-major ones unchanged. Products are plain
 * fp32 (cublasSgemm) unless the device was opened with a lower matmul
 * precision (cuda_impl.matmul: TF32 or bf16 tensor cores through cublasGemmEx,
 * fp32 inputs, outputs and accumulation).
 */
#include "kernels/cuda/cuda_common.cuh"

static cublasComputeType_t cu_compute_type(const cuda_impl *c)
{
    return c->matmul == 2 ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F_FAST_TF32;
}

ob_status ob_cu_gemm(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha, const float *A,
                     int lda, const float *B, int ldb, float beta, float *C, int ldc, ob_err *e)
{
    if (m < 0 || n < 0 || k < 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "cuda gemm: negative size m=%d n=%d k=%d", m, n, k);
    if (m == 0 || n == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    if (c->matmul) {
        OB_CUBLAS(e, "gemm",
                  cublasGemmEx(c->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                               &alpha, B, CUDA_R_32F, ldb, A, CUDA_R_32F, lda, &beta, C, CUDA_R_32F, ldc,
                               cu_compute_type(c), CUBLAS_GEMM_DEFAULT));
        return OB_OK;
    }
    OB_CUBLAS(e, "gemm",
              cublasSgemm(c->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                          k, &alpha, B, ldb, A, lda, &beta, C, ldc));
    return OB_OK;
}

ob_status ob_cu_gemm_sb(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha,
                        const float *A, int lda, int64_t sa, const float *B, int ldb, int64_t sb,
                        float beta, float *C, int ldc, int64_t sc, int batch, ob_err *e)
{
    if (m < 0 || n < 0 || k < 0 || batch < 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL,
                                "cuda gemm_strided_batched: negative size m=%d n=%d k=%d batch=%d", m,
                                n, k, batch);
    if (m == 0 || n == 0 || batch == 0) return OB_OK;
    cuda_impl *c = cu_impl(dev);
    if (c->matmul) {
        OB_CUBLAS(e, "gemm_strided_batched",
                  cublasGemmStridedBatchedEx(c->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                             n, m, k, &alpha, B, CUDA_R_32F, ldb, (long long)sb, A, CUDA_R_32F, lda,
                                             (long long)sa, &beta, C, CUDA_R_32F, ldc, (long long)sc, batch,
                                             cu_compute_type(c), CUBLAS_GEMM_DEFAULT));
        return OB_OK;
    }
    OB_CUBLAS(e, "gemm_strided_batched",
              cublasSgemmStridedBatched(c->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                        ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, B, ldb,
                                        (long long)sb, A, lda, (long long)sa, &beta, C, ldc,
                                        (long long)sc, batch));
    return OB_OK;
}

/* Operands that hold bf16 values: cuBLAS's bf16 tensor-core path converts
 * them to bf16 without loss and sums the products in float, as torch's bf16
 * GEMM does, whatever OPTBENCH_MATMUL_PRECISION says for other products. */
ob_status ob_cu_gemm_sb_bf16(ob_device *dev, int ta, int tb, int m, int n, int k, float alpha, const float *A,
                             int lda, int64_t sa, const float *B, int ldb, int64_t sb, float beta, float *C, int ldc,
                             int64_t sc, int batch, ob_err *e)
{
    if (m < 0 || n < 0 || k < 0 || batch < 0 || beta != 0.0f)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL,
                                "cuda gemm_sb_bf16: m=%d n=%d k=%d batch=%d beta=%g (sizes >= 0, beta 0)", m, n, k,
                                batch, (double)beta);
    if (m == 0 || n == 0 || batch == 0) return OB_OK;
    OB_CUBLAS(e, "gemm_sb_bf16",
              cublasGemmStridedBatchedEx(cu_impl(dev)->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                         ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, B, CUDA_R_32F, ldb,
                                         (long long)sb, A, CUDA_R_32F, lda, (long long)sa, &beta, C, CUDA_R_32F, ldc,
                                         (long long)sc, batch, CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT));
    return OB_OK;
}
