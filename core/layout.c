/* core/layout.c - the tensor table (see layout.h). */
#include "core/layout.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The most floats a tensor, and the whole layout, may have: their byte
 * counts (and the aligned offsets) stay well inside int64_t and size_t. */
#define OB_LAYOUT_MAX_FLOATS (INT64_MAX / 8)

static const char *const tag_names[OB_TAG_COUNT] = {
    "matrix", "bias", "norm", "embedding", "head", "conv", "vector"};

const char *ob_tag_name(ob_tag t)
{
    return (t >= 0 && t < OB_TAG_COUNT) ? tag_names[t] : "?";
}

int ob_tag_parse(const char *s)
{
    for (int i = 0; i < OB_TAG_COUNT; i++)
        if (strcmp(s, tag_names[i]) == 0) return i;
    return -1;
}

void ob_layout_init(ob_layout *l)
{
    memset(l, 0, sizeof *l);
}

void ob_layout_free(ob_layout *l)
{
    free(l->t);
    memset(l, 0, sizeof *l);
}

ob_status ob_layout_add(ob_layout *l, const char *name, ob_tag tag, int ndim,
                        const int64_t *shape, int *index, ob_err *e)
{
    if (l->finalized)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "layout is final; cannot add '%s'", name);
    if (ndim < 1 || ndim > OB_MAX_DIMS)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "tensor '%s': %d dims", name, ndim);
    if (strlen(name) >= OB_NAME_MAX)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "tensor name too long: '%s'", name);
    if (ob_layout_find(l, name) >= 0)
        return OB_FAIL_INTERNAL(e, OB_ERR_INTERNAL, "tensor '%s' declared twice", name);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        ob_tensor *t = realloc(l->t, (size_t)cap * sizeof *t);
        if (!t) return ob_fail(e, OB_ERR_NOMEM, "out of memory growing the tensor table");
        l->t = t;
        l->cap = cap;
    }
    ob_tensor *t = &l->t[l->n];
    memset(t, 0, sizeof *t);
    strcpy(t->name, name);
    t->tag = tag;
    t->ndim = ndim;
    t->numel = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] <= 0)
            return ob_fail(e, OB_ERR_INPUT, "tensor '%s': dimension %d is %lld; sizes must be positive",
                           name, d, (long long)shape[d]);
        if (shape[d] > OB_LAYOUT_MAX_FLOATS / t->numel)
            return ob_fail(e, OB_ERR_INPUT, "tensor '%s': shape too large (more than %lld elements)", name,
                           (long long)OB_LAYOUT_MAX_FLOATS);
        t->shape[d] = shape[d];
        t->numel *= shape[d];
    }
    t->group = -1;
    t->offset = -1;
    if (index) *index = l->n;
    l->n++;
    return OB_OK;
}

ob_status ob_layout_finalize(ob_layout *l, ob_err *e)
{
    int max_group = -1;
    for (int i = 0; i < l->n; i++) {
        if (l->t[i].group < 0 || l->t[i].group >= OB_MAX_GROUPS)
            return ob_fail(e, OB_ERR_INPUT,
                           "parameter '%s' (tag %s, %d-D) is routed to no optimizer group; "
                           "add a routing rule that matches it",
                           l->t[i].name, ob_tag_name(l->t[i].tag), l->t[i].ndim);
        if (l->t[i].group > max_group) max_group = l->t[i].group;
    }
    int64_t off = 0;
    l->n_groups = max_group + 1;
    for (int g = 0; g < l->n_groups; g++) {
        l->group_begin[g] = off;
        for (int i = 0; i < l->n; i++) {
            if (l->t[i].group != g) continue;
            const int64_t padded = (l->t[i].numel + OB_ALIGN_FLOATS - 1) / OB_ALIGN_FLOATS * OB_ALIGN_FLOATS;
            if (padded > OB_LAYOUT_MAX_FLOATS - off)
                return ob_fail(e, OB_ERR_INPUT, "the parameters total more than %lld floats (at tensor '%s')",
                               (long long)OB_LAYOUT_MAX_FLOATS, l->t[i].name);
            l->t[i].offset = off;
            off += padded;
        }
        l->group_end[g] = off;
    }
    l->total = off;
    l->finalized = 1;
    return OB_OK;
}

int ob_layout_find(const ob_layout *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->t[i].name, name) == 0) return i;
    return -1;
}

int64_t ob_layout_numel(const ob_layout *l)
{
    int64_t n = 0;
    for (int i = 0; i < l->n; i++) n += l->t[i].numel;
    return n;
}

void ob_tensor_matrix_dims(const ob_tensor *t, int64_t *rows, int64_t *cols)
{
    if (t->ndim == 1) {
        *rows = 1;
        *cols = t->shape[0];
        return;
    }
    *rows = t->shape[0];
    *cols = t->numel / t->shape[0];
}
