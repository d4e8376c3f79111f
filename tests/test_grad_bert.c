/* tests/test_grad_bert.c - the whole bert model's gradient against central
 * finite differences of its loss (float32 loss, so a directional derivative
 * per tensor with an honest float32 tolerance), tied and untied heads. */
#include "test_wl_rig.h"

static void check_config(const char *sets)
{
    wl_rig r;
    if (!wl_rig_open(&r, "bert-tiny", sets, 3, NULL, NULL)) {
        wl_rig_close(&r);
        return;
    }
    int bad = wl_rig_gradcheck(&r, 5, 1e-2, 1, 5e-3, 3e-7, getenv("OB_VERBOSE") != NULL);
    CHECK_MSG(bad == 0, "%d tensors of bert (%s) disagree with finite differences", bad, sets);
    wl_rig_close(&r);
}

int main(void)
{
    const char *base = "vocab=13,seq=6,batch=3,layers=2,dim=8,heads=2,init_std=0.4,mask_prob=0.4,eval_batches=1,"
                       "branch=3,topics=2";
    char sets[512];
    snprintf(sets, sizeof sets, "%s,tie_head=1,head_bias=1", base);
    check_config(sets);
    snprintf(sets, sizeof sets, "%s,tie_head=0,head_bias=0,random_token_frac=0.5,mask_token_frac=0.3", base);
    check_config(sets);
    return check_done();
}
