/* fuzz/fuzz_config.c - libFuzzer entry for ob_fuzz_config (fuzz/targets.h); built
 * and run by scripts/fuzz.sh with AddressSanitizer and UBSan. */
#include "fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return ob_fuzz_config(data, size);
}
