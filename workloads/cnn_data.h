/* workloads/cnn_data.h - the class templates of the cnn workload's synthetic
 * images.
 *
 * Each class k has a smooth, periodic template T_k (H, W, C) (NHWC): per
 * channel a sum of `OB_CNN_WAVES` plane waves with integer frequencies of at
 * most 3 cycles per image, random phase and amplitude falling with frequency;
 * each template has zero mean and unit RMS. The first `pairs` pairs of
 * classes are confusable: T_{2j+1} = normalize(T_{2j} + confusion * R_j) with
 * R_j another smooth field, so those classes differ only by a faint pattern.
 * Everything comes from (data_seed, OB_STREAM_WORLD + 16..). The images
 * themselves are drawn on the device by the synth_images backend op (random
 * circular shift, contrast and Gaussian noise; see kernels/backend.h), so a
 * batch is a pure function of (seed, stream, index) on every backend.
 */
#ifndef OB_WORKLOADS_CNN_DATA_H
#define OB_WORKLOADS_CNN_DATA_H

#include <stdint.h>

#include "core/ob.h"

#define OB_CNN_WAVES 10

/* out (K, H, W, C) on the host. */
ob_status ob_cnn_templates(float *out, int K, int H, int W, int C, int pairs, double confusion,
                           uint64_t data_seed, ob_err *e);

#endif
