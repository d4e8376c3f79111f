/* kernels/cpu/cpu.h - CPU kernels shared between the files of kernels/cpu. */
#ifndef OB_KERNELS_CPU_H
#define OB_KERNELS_CPU_H

#include "kernels/backend.h"

ob_status ob_cpu_rosenbrock(ob_device *dev, const float *x, int64_t n, float *loss, float *g, ob_err *e);

#endif
