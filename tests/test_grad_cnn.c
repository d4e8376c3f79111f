/* tests/test_grad_cnn.c - the whole cnn model's gradient (plain and
 * ResNet-style, with pooling, strided and 1x1 convolutions) against central
 * finite differences of its float32 loss, two directional derivatives per
 * tensor, on the convolution path the CPU takes and on im2col + gemm. ReLU and max pooling are piecewise linear: the step is small enough
 * that no kink is crossed for these seeds. */
#include "kernels/cpu/nn_cpu.h"
#include "test_wl_rig.h"

static void check_config(const char *sets)
{
    wl_rig r;
    if (!wl_rig_open(&r, "cnn-tiny", sets, 11, NULL, NULL)) {
        wl_rig_close(&r);
        return;
    }
    int bad = wl_rig_gradcheck(&r, 2, 1e-3, 3, 1e-2, 1e-7, getenv("OB_VERBOSE") != NULL);
    CHECK_MSG(bad == 0, "%d tensors of cnn (%s) disagree with finite differences", bad, sets);
    wl_rig_close(&r);
}

int main(void)
{
    /* each on the path the CPU takes (the direct convolution where it has
     * AVX2 or AVX-512: every stride-1 unit) and on im2col + gemm for every
     * unit, chunked or not, as a CPU without them runs it */
    const char *paths[] = {"auto", "im2col"};
    for (int k = 0; k < 2; k++) {
        ob_cpu_conv_force(paths[k]);
        check_config("image=8,batch=4,classes=3,width=4,stages=2,depth=1,groups=2,residual=0,eval_batches=1,"
                     "noise=0.5");
        check_config("image=8,batch=3,classes=3,width=4,stages=2,depth=2,groups=2,residual=1,eval_batches=1,"
                     "noise=0.5");
        check_config("image=6,batch=2,classes=4,width=2,stages=1,depth=2,groups=1,residual=0,channels=2,"
                     "eval_batches=1");
        /* one image per im2col chunk: the chunked convolution */
        check_config("image=8,batch=3,classes=3,width=4,stages=2,depth=1,groups=2,residual=1,eval_batches=1,"
                     "noise=0.5,conv_chunk_kib=1");
        check_config("image=8,batch=4,classes=3,width=4,stages=2,depth=1,groups=2,residual=0,eval_batches=1,"
                     "noise=0.5,conv_chunk_kib=1");
    }
    return check_done();
}
