/* harness/checkpoint.h - checkpoint files: everything a run needs to go on
 * bit for bit after it was stopped or killed.
 *
 * A checkpoint is one file of named sections (the parameter arena, every
 * optimizer state blob, the run loop's own counters, ...) behind a header and
 * before a CRC-32C trailer. It is written to NAME.tmp, fsync'd, renamed to
 * NAME and the folder fsync'd, so a checkpoint file is either complete or
 * absent; older ones beyond the newest `keep` are then deleted. A reader
 * checks the magic, the version, every length against the file size, and
 * the checksum before it trusts a byte; a damaged file is an error naming
 * what is wrong, never a crash (the reader runs under a fuzzer).
 *
 * File layout (integers little-endian):
 *   offset 0   8  magic "OBCKPT\r\n"
 *          8   4  u32 format version (OB_CKPT_VERSION)
 *         12   4  u32 number of sections (<= OB_CKPT_MAX_SECTIONS)
 *         16   8  i64 step: training steps completed
 *         24   8  u64 length of the whole file in bytes
 *         32      sections, each: u32 name length L (1..OB_CKPT_NAME_MAX-1),
 *                 L bytes of name, u64 data length D, D bytes of data
 *   length-8   4  u32 CRC-32C (Castagnoli) of every byte before it
 *   length-4   4  "OBCE"
 * Files are named ckpt-<step, 12 digits>.obck inside the run's folder.
 * The framing above is little-endian on any host; the sections' data are the
 * writer's memory as it is (floats, doubles, int64 counters in the host's
 * byte order), so a checkpoint is read back correctly by a little-endian
 * host (x86-64, aarch64 Linux), not by a big-endian one.
 */
#ifndef OB_HARNESS_CHECKPOINT_H
#define OB_HARNESS_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "core/fs.h"
#include "core/ob.h"

#define OB_CKPT_VERSION 1
#define OB_CKPT_MAX_SECTIONS 256
#define OB_CKPT_NAME_MAX 64
#define OB_CKPT_HEADER_BYTES 32
#define OB_CKPT_TRAILER_BYTES 8

typedef struct ob_ckpt_section {
    char name[OB_CKPT_NAME_MAX];
    const void *data; /* writing: the bytes; reading: points into the file's buffer */
    uint64_t bytes;
} ob_ckpt_section;

typedef struct ob_ckpt {
    int64_t step;
    int n;
    ob_ckpt_section sec[OB_CKPT_MAX_SECTIONS];
    unsigned char *buf; /* the whole file (ob_ckpt_read), freed by ob_ckpt_free */
    size_t len;
} ob_ckpt;

/* CRC-32C of p[0..n) continuing from crc (start with 0). */
uint32_t ob_crc32c(uint32_t crc, const void *p, size_t n);

/* Parse a checkpoint held in memory; sections point into buf, which must
 * outlive c. Any inconsistency is OB_ERR_INPUT with a message. */
ob_status ob_ckpt_parse(const unsigned char *buf, size_t len, ob_ckpt *c, ob_err *e);
/* Read and parse a file (c->buf owns its bytes). OB_ERR_INPUT: it is no
 * usable checkpoint (damaged, cut, gone, not a file); OB_ERR_IO or
 * OB_ERR_NOMEM: it could not be read (a permission, an I/O error, memory),
 * which says nothing of the file, so a caller keeps it. */
ob_status ob_ckpt_read(const char *path, ob_ckpt *c, ob_err *e);
void ob_ckpt_free(ob_ckpt *c);
/* The section called name, or NULL. */
const ob_ckpt_section *ob_ckpt_find(const ob_ckpt *c, const char *name);

/* Encode a checkpoint into a new malloc'd buffer (*out, *len). */
ob_status ob_ckpt_encode(int64_t step, const ob_ckpt_section *secs, int n, unsigned char **out,
                         size_t *len, ob_err *e);
/* Write dir/ckpt-<step>.obck atomically (tmp, fsync, rename, fsync dir),
 * creating dir when needed; then keep only the newest `keep` checkpoints. */
ob_status ob_ckpt_write(const char *dir, int64_t step, const ob_ckpt_section *secs, int n, int keep,
                        ob_err *e);
/* Steps of the checkpoints in dir, newest first, and how many (*count, at
 * most max; 0 when dir does not exist). A folder that cannot be read whole
 * is an error, never "none": a caller would start the run over. */
ob_status ob_ckpt_list(const char *dir, int64_t *steps, int max, int *count, ob_err *e);
void ob_ckpt_path(const char *dir, int64_t step, char *buf, size_t n);
/* Delete every checkpoint (and leftover temporary file) in dir, then dir
 * itself when it is empty: a run's lock file (locks.h), where dir is the
 * folder that holds it, stays, and the folder with it. */
void ob_ckpt_remove_checkpoints(const char *dir);
/* As ob_ckpt_remove_checkpoints, and the lock file too: a finished run's
 * folder. */
void ob_ckpt_remove_all(const char *dir);

#endif
