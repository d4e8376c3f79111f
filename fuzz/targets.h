/* fuzz/targets.h - the bodies of the fuzz targets: each takes one input and
 * feeds it to a parser that reads what users (or a crash) hand optbench. A
 * finding is a crash, a sanitizer report, a leak or a broken invariant
 * (abort). fuzz/fuzz_*.c wrap them for libFuzzer (scripts/fuzz.sh);
 * tests/test_fuzz_regress.c replays the seeds and every saved finding. */
#ifndef OB_FUZZ_TARGETS_H
#define OB_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* The YAML configuration (ob_config_load_text), matrix expansion, and the
 * flag-form parsers (lr, seed, name lists, --set, --shard, --devices). */
int ob_fuzz_config(const uint8_t *data, size_t size);
/* The checkpoint reader, as is and with the length and checksum made
 * right (so that the section parser is reached); parse(encode(parse(x)))
 * must give the same sections. */
int ob_fuzz_checkpoint(const uint8_t *data, size_t size);
/* The numeric-rows reader behind `optbench replay` (optimizers/rows.h). */
int ob_fuzz_rows(const uint8_t *data, size_t size);

#endif
