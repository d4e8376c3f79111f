/* kernels/cpu/nn_cpu.h - CPU kernels of the neural-network layer ops (the
 * "neural-network layers" section of kernels/backend.h): transformer layers
 * and cross-entropy in nn_cpu.c, convolution-network layers and the synthetic
 * image generator in conv_cpu.c. Each is the backend slot of the same name. */
#ifndef OB_KERNELS_CPU_NN_CPU_H
#define OB_KERNELS_CPU_NN_CPU_H

#include "kernels/backend.h"

/* nn_cpu.c */
ob_status ob_cpu_embedding_forward(ob_device *dev, float *out, const int32_t *tokens, const float *wte,
                                   const float *wpe, int N, int T, int C, ob_err *e);
ob_status ob_cpu_embedding_backward(ob_device *dev, float *dwte, float *dwpe, const float *dout,
                                    const int32_t *tokens, int N, int T, int C, int V, ob_err *e);
ob_status ob_cpu_layernorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int N, int C, ob_err *e);
ob_status ob_cpu_layernorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int N, int C, ob_err *e);
ob_status ob_cpu_bias_add(ob_device *dev, float *x, const float *b, int N, int C, ob_err *e);
ob_status ob_cpu_bias_backward(ob_device *dev, float *db, const float *dout, int N, int C, ob_err *e);
ob_status ob_cpu_gelu_forward(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e);
ob_status ob_cpu_gelu_backward(ob_device *dev, float *dinp, const float *inp, const float *dout, int64_t n,
                               ob_err *e);
ob_status ob_cpu_heads_split(ob_device *dev, float *dst, const float *src, int B, int T, int nsec, int NH,
                             int HS, ob_err *e);
ob_status ob_cpu_heads_merge(ob_device *dev, float *dst, const float *src, int B, int T, int nsec, int NH,
                             int HS, ob_err *e);
ob_status ob_cpu_softmax_forward(ob_device *dev, float *x, int R, int L, ob_err *e);
ob_status ob_cpu_softmax_backward(ob_device *dev, float *dx, const float *dy, const float *y, int R, int L,
                                  ob_err *e);
ob_status ob_cpu_rows_gather(ob_device *dev, float *out, const float *inp, const int32_t *idx, int M, int C,
                             ob_err *e);
ob_status ob_cpu_rows_scatter_add(ob_device *dev, float *dinp, const float *dout, const int32_t *idx, int M,
                                  int C, ob_err *e);
ob_status ob_cpu_xent_forward(ob_device *dev, float *probs, float *losses, const float *logits,
                              const int32_t *targets, int M, int V, float *loss, float *correct, ob_err *e);
ob_status ob_cpu_xent_backward(ob_device *dev, float *dlogits, const float *probs, const int32_t *targets,
                               int M, int V, float scale, ob_err *e);

/* conv_cpu.c */
ob_status ob_cpu_im2col(ob_device *dev, float *col, const float *inp, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e);
ob_status ob_cpu_col2im(ob_device *dev, float *dinp, const float *dcol, int B, int H, int W, int Cin, int K,
                        int stride, int pad, ob_err *e);
ob_status ob_cpu_groupnorm_forward(ob_device *dev, float *out, float *mean, float *rstd, const float *inp,
                                   const float *w, const float *b, int B, int HW, int C, int G, ob_err *e);
ob_status ob_cpu_groupnorm_backward(ob_device *dev, float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean, const float *rstd,
                                    int B, int HW, int C, int G, ob_err *e);
ob_status ob_cpu_relu_forward(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e);
ob_status ob_cpu_relu_backward(ob_device *dev, float *dinp, const float *out, const float *dout, int64_t n,
                               ob_err *e);
ob_status ob_cpu_maxpool2_forward(ob_device *dev, float *out, const float *inp, int B, int H, int W, int C,
                                  ob_err *e);
ob_status ob_cpu_maxpool2_backward(ob_device *dev, float *dinp, const float *dout, const float *inp, int B,
                                   int H, int W, int C, ob_err *e);
ob_status ob_cpu_avgpool_forward(ob_device *dev, float *out, const float *inp, int B, int HW, int C,
                                 ob_err *e);
ob_status ob_cpu_avgpool_backward(ob_device *dev, float *dinp, const float *dout, int B, int HW, int C,
                                  ob_err *e);
ob_status ob_cpu_synth_images(ob_device *dev, const ob_image_synth *a, float *out, int32_t *labels,
                              const float *templates, ob_err *e);

/* The builds of each conv_cpu.c op behind the entry points above: portable
 * (_base), AVX2 (_avx2) and AVX-512 (_avx512); the last two on x86-64 with
 * GCC only, to be called only when __builtin_cpu_supports("avx2") or
 * ("avx512f") says so. They give the same bits. */
#define OB_CPU_CONV_BUILD(isa)                                                                              \
    ob_status ob_cpu_im2col_##isa(ob_device *dev, float *col, const float *inp, int B, int H, int W, int Cin,   \
                                  int K, int stride, int pad, ob_err *e);                                       \
    ob_status ob_cpu_col2im_##isa(ob_device *dev, float *dinp, const float *dcol, int B, int H, int W, int Cin, \
                                  int K, int stride, int pad, ob_err *e);                                       \
    ob_status ob_cpu_groupnorm_forward_##isa(ob_device *dev, float *out, float *mean, float *rstd,              \
                                             const float *inp, const float *w, const float *b, int B, int HW,   \
                                             int C, int G, ob_err *e);                                          \
    ob_status ob_cpu_groupnorm_backward_##isa(ob_device *dev, float *dinp, float *dw, float *db,                \
                                              const float *dout, const float *inp, const float *w,              \
                                              const float *mean, const float *rstd, int B, int HW, int C,       \
                                              int G, ob_err *e);                                                \
    ob_status ob_cpu_relu_forward_##isa(ob_device *dev, float *out, const float *inp, int64_t n, ob_err *e);   \
    ob_status ob_cpu_relu_backward_##isa(ob_device *dev, float *dinp, const float *out, const float *dout,      \
                                         int64_t n, ob_err *e);                                                 \
    ob_status ob_cpu_maxpool2_forward_##isa(ob_device *dev, float *out, const float *inp, int B, int H, int W,  \
                                            int C, ob_err *e);                                                  \
    ob_status ob_cpu_maxpool2_backward_##isa(ob_device *dev, float *dinp, const float *dout, const float *inp,  \
                                             int B, int H, int W, int C, ob_err *e);                            \
    ob_status ob_cpu_avgpool_forward_##isa(ob_device *dev, float *out, const float *inp, int B, int HW, int C,  \
                                           ob_err *e);                                                          \
    ob_status ob_cpu_avgpool_backward_##isa(ob_device *dev, float *dinp, const float *dout, int B, int HW,      \
                                            int C, ob_err *e);                                                  \
    ob_status ob_cpu_synth_images_##isa(ob_device *dev, const ob_image_synth *a, float *out, int32_t *labels,   \
                                        const float *templates, ob_err *e);
OB_CPU_CONV_BUILD(base)
OB_CPU_CONV_BUILD(avx2)
OB_CPU_CONV_BUILD(avx512)

/* conv_direct.c (and its AVX2 build, conv_direct_avx2.c): direct convolution
 * (stride 1, zero padding 0 <= pad < K) on x86-64 CPUs with AVX-512F or with
 * AVX2 and FMA; ob_cpu_conv_direct_ok says whether the path in effect runs a
 * shape (otherwise the two return OB_ERR_UNSUPPORTED and the caller uses
 * im2col + gemm). Kernels are (Cout, Cin, K, K), images NHWC; bitwise
 * repeatable for any thread count, and the two vector paths give the same bits. */
typedef enum ob_cpu_conv_path { OB_CPU_CONV_IM2COL, OB_CPU_CONV_AVX2, OB_CPU_CONV_AVX512 } ob_cpu_conv_path;
/* The path for a value of OB_CPU_CONV: "avx512", "avx2" or "im2col" where this
 * CPU and build can run it; anything else (NULL, "auto", an unknown name, a path
 * the CPU lacks) gets auto's choice: AVX-512F, else AVX2 + FMA, else im2col. */
ob_cpu_conv_path ob_cpu_conv_choose(const char *name);
/* The path in effect: ob_cpu_conv_choose(getenv("OB_CPU_CONV")) at the first
 * call (of this or of the ops below), or the last ob_cpu_conv_force. */
ob_cpu_conv_path ob_cpu_conv_path_now(void);
/* Makes ob_cpu_conv_choose(name) the path in effect and returns it (tests and
 * tools; not while a convolution runs on another thread). */
ob_cpu_conv_path ob_cpu_conv_force(const char *name);
/* "im2col", "avx2", "avx512" */
const char *ob_cpu_conv_path_name(ob_cpu_conv_path p);
int ob_cpu_conv_direct_ok(int Cin, int Cout, int K, int stride, int pad);
/* out (B,Ho,Wo,Cout) = conv of inp (B,H,W,Cin) with w (Cout,Cin,K,K); Ho = H + 2 pad - K + 1. */
ob_status ob_cpu_conv_forward(ob_device *dev, float *out, const float *inp, const float *w, int B, int H, int W,
                              int Cin, int Cout, int K, int stride, int pad, ob_err *e);
/* From dout (B,Ho,Wo,Cout): dinp (B,H,W,Cin) overwritten (skipped when NULL), dw (Cout,Cin,K,K) +=. */
ob_status ob_cpu_conv_backward(ob_device *dev, float *dinp, float *dw, const float *dout, const float *inp,
                               const float *w, int B, int H, int W, int Cin, int Cout, int K, int stride, int pad,
                               ob_err *e);

/* Fixed row chunking for column reductions: rows [n0, n1) of chunk c of nch
 * chunks, nch depending only on N (never on the thread count), so the sums
 * are bitwise repeatable. Partial sums per chunk are combined in order. */
#define OB_CPU_RED_CHUNKS 64
static inline int ob_cpu_red_nchunks(int64_t N)
{
    return N < OB_CPU_RED_CHUNKS ? (int)(N > 0 ? N : 1) : OB_CPU_RED_CHUNKS;
}

#endif
