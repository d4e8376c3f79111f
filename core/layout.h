/* core/layout.h - the tensor table behind each flat arena.
 *
 * A workload declares its parameters (name, shape, tag); the optimizer routes
 * each to a group; ob_layout_finalize then assigns offsets so that every group
 * is one contiguous range of the arena (one fused launch per group) and every
 * tensor starts on a 64-byte boundary (16-byte vector loads stay aligned).
 * Parameters, gradients and each optimizer state role share one layout, so a
 * tensor has the same offset in all of them.
 */
#ifndef OB_CORE_LAYOUT_H
#define OB_CORE_LAYOUT_H

#include <stdint.h>

#include "core/ob.h"

#define OB_MAX_DIMS 4
#define OB_NAME_MAX 64
#define OB_ALIGN_FLOATS 16 /* 64 bytes */

/* What a parameter is, for routing (hybrid Muon/ROOT, weight-decay masks). */
typedef enum ob_tag {
    OB_TAG_MATRIX = 0,  /* 2-D hidden weight */
    OB_TAG_BIAS,
    OB_TAG_NORM,        /* LayerNorm/BatchNorm gain or shift */
    OB_TAG_EMBEDDING,
    OB_TAG_HEAD,        /* output classifier / LM head */
    OB_TAG_CONV,        /* 4-D convolution kernel (out, in, kh, kw) */
    OB_TAG_VECTOR,      /* anything else (e.g. the point of a test function) */
    OB_TAG_COUNT
} ob_tag;

const char *ob_tag_name(ob_tag t);
int ob_tag_parse(const char *s); /* -1 when unknown */

typedef struct ob_tensor {
    char name[OB_NAME_MAX];
    ob_tag tag;
    int ndim;
    int64_t shape[OB_MAX_DIMS];
    int64_t numel;
    int64_t offset; /* in floats, valid after ob_layout_finalize */
    int group;      /* set by routing, -1 before */
} ob_tensor;

typedef struct ob_layout {
    ob_tensor *t;
    int n, cap;
    int64_t total;  /* floats, including alignment padding; after finalize */
    int n_groups;
    int64_t group_begin[16], group_end[16]; /* float ranges per group */
    int finalized;
} ob_layout;

#define OB_MAX_GROUPS 16

void ob_layout_init(ob_layout *l);
void ob_layout_free(ob_layout *l);
/* Adds a tensor; *index (may be NULL) receives its position in l->t. */
ob_status ob_layout_add(ob_layout *l, const char *name, ob_tag tag, int ndim,
                        const int64_t *shape, int *index, ob_err *e);
/* Every tensor must have a group in [0, OB_MAX_GROUPS); else an error naming it. */
ob_status ob_layout_finalize(ob_layout *l, ob_err *e);
int ob_layout_find(const ob_layout *l, const char *name); /* index or -1 */
int64_t ob_layout_numel(const ob_layout *l); /* sum of numel, no padding */
/* Matrix view (rows, cols) of a tensor: 2-D as is, 4-D conv as (out, in*kh*kw). */
void ob_tensor_matrix_dims(const ob_tensor *t, int64_t *rows, int64_t *cols);

#endif
