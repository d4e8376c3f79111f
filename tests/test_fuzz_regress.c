/* tests/test_fuzz_regress.c - replays the fuzzing seeds (fuzz/seeds/TARGET)
 * and every input the fuzzer ever found a problem with
 * (tests/fuzz_regress/TARGET) through the fuzz target bodies, so a fixed
 * finding stays fixed. Meaningful under the sanitizer build
 * (scripts/test-sanitize.sh); in a plain build it still catches crashes and
 * broken invariants (the targets abort). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz/targets.c"

static int replay_dir(const char *dir, int (*fn)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !strncmp(de->d_name, "README", 6)) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        unsigned char *buf = malloc(1 << 20);
        size_t len = buf ? fread(buf, 1, 1 << 20, f) : 0;
        fclose(f);
        fn(buf, len);
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

int main(void)
{
    const char *src = getenv("OB_SOURCE_DIR");
    if (!src) src = ".";
    static const struct {
        const char *name;
        int (*fn)(const uint8_t *, size_t);
    } t[] = {{"config", ob_fuzz_config}, {"checkpoint", ob_fuzz_checkpoint}, {"rows", ob_fuzz_rows}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/fuzz/seeds/%s", src, t[i].name);
        int seeds = replay_dir(dir, t[i].fn);
        snprintf(dir, sizeof dir, "%s/tests/fuzz_regress/%s", src, t[i].name);
        int found = replay_dir(dir, t[i].fn);
        printf("%s: %d seeds, %d earlier findings replayed\n", t[i].name, seeds, found);
        CHECK(seeds > 0);
    }
    /* the empty input, for each */
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) t[i].fn((const uint8_t *)"", 0);
    CHECK(1);
    return check_done();
}
