/* fuzz/targets.c - the fuzz target bodies (see targets.h). */
#include "fuzz/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/checkpoint.h"
#include "harness/config.h"
#include "harness/matrix.h"
#include "optimizers/rows.h"

static char *as_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t) abort();
    memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

int ob_fuzz_config(const uint8_t *data, size_t size)
{
    char *text = as_text(data, size);
    ob_config *c = malloc(sizeof *c);
    if (!c) abort();
    ob_err e;
    ob_config_init(c);
    if (ob_config_load_text(c, text, "fuzz.yaml", &e) == OB_OK) {
        ob_matrix m;
        if (ob_matrix_expand(c, &m, NULL, &e) == OB_OK) {
            if (m.n < 1) abort(); /* expansion succeeds only with cells */
            ob_matrix_free(&m);
        }
    } else if (!e.msg[0] || e.status == OB_OK) {
        abort(); /* a failure must say why */
    }
    /* the flag-form parsers on the same text */
    ob_config_init(c);
    ob_lr_list l;
    memset(&l, 0, sizeof l);
    ob_config_set_lrs(&l, text, "--lrs", &e);
    ob_config_set_seeds(c, text, 0, "--seeds", &e);
    ob_config_set_seeds(c, text, 1, "--seeds", &e);
    ob_config_set_names(c->workloads, &c->n_workloads, text, "workloads", "--workloads", &e);
    ob_config_add_set(c, text, "--set", &e);
    ob_config_add_sweep(c, text, "--sweep", &e);
    ob_config_set_shard(c, text, "--shard", &e);
    if (c->shard_n > 0 && (c->shard_k < 0 || c->shard_k >= c->shard_n)) abort();
    ob_config_set_devices(c, text, "--devices", &e);
    ob_config_free(c);
    free(c);
    free(text);
    return 0;
}

int ob_fuzz_checkpoint(const uint8_t *data, size_t size)
{
    ob_ckpt *c = malloc(sizeof *c);
    unsigned char *buf = malloc(size ? size : 1);
    if (!c || !buf) abort();
    ob_err e;
    ob_ckpt_parse(data, size, c, &e);
    memcpy(buf, data, size);
    if (size >= OB_CKPT_HEADER_BYTES + OB_CKPT_TRAILER_BYTES) {
        /* make the length, the end marker and the checksum right */
        uint64_t len = size;
        for (int i = 0; i < 8; i++) buf[24 + i] = (unsigned char)(len >> (8 * i));
        memcpy(buf + size - 4, "OBCE", 4);
        uint32_t crc = ob_crc32c(0, buf, size - 8);
        for (int i = 0; i < 4; i++) buf[size - 8 + i] = (unsigned char)(crc >> (8 * i));
    }
    if (ob_ckpt_parse(buf, size, c, &e) == OB_OK) {
        /* sections lie inside the buffer; encoding them again reproduces it */
        for (int i = 0; i < c->n; i++) {
            const unsigned char *p = c->sec[i].data;
            if (p < buf || p + c->sec[i].bytes > buf + size) abort();
            if (ob_ckpt_find(c, c->sec[i].name) != &c->sec[i]) abort();
        }
        unsigned char *again;
        size_t len2;
        if (ob_ckpt_encode(c->step, c->sec, c->n, &again, &len2, &e) != OB_OK) abort();
        if (len2 != size || memcmp(again, buf, size) != 0) abort();
        free(again);
    }
    free(buf);
    free(c);
    return 0;
}

int ob_fuzz_rows(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/ob_fuzz_rows_%d.csv", (int)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    ob_rows r;
    ob_err e;
    memset(&r, 0, sizeof r);
    for (int d = 0; d < 2; d++) {
        if (ob_rows_read(path, d ? '\t' : ',', &r, &e) == OB_OK) {
            for (int i = 0; i < r.n; i++) {
                if (r.len[i] < 0 || r.line[i] < 1) abort();
                for (int k = 0; k < r.len[i]; k++) (void)r.v[i][k];
            }
            ob_rows_free(&r);
        } else if (!e.msg[0]) {
            abort();
        }
    }
    unlink(path);
    return 0;
}
