/* tests/test_core.c - hyperparameter parsing, the tensor layout, the RNG, UTF-8
 * text in messages. */
#include <string.h>

#include "check.h"
#include "core/ob.h"
#include "core/hparams.h"
#include "core/layout.h"
#include "core/rng.h"

static const ob_hp_def defs[] = {
    {"lr", OB_HP_FLOAT, 1e-3, 0, INFINITY, 1, 0, NULL, "learning rate"},
    {"beta1", OB_HP_FLOAT, 0.9, 0, 1, 0, 1, NULL, ""},
    {"nesterov", OB_HP_BOOL, 0, 0, 1, 0, 0, NULL, ""},
    {"adjust_lr", OB_HP_ENUM, 0, 0, 1, 0, 0, "original|match_rms_adamw", ""},
};

static void test_hparams(void)
{
    ob_hp_values hv;
    ob_err e;
    ob_hp_defaults(&hv, defs, 4);
    CHECK_NEAR(ob_hp_get(&hv, "lr"), 1e-3, 0);
    CHECK_OK(ob_hp_set(&hv, "adam", "beta1", "0.95", &e), &e);
    CHECK_NEAR(ob_hp_get(&hv, "beta1"), 0.95, 0);
    CHECK(ob_hp_set(&hv, "adam", "beta1", "1", &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "out of range") != NULL);
    CHECK(ob_hp_set(&hv, "adam", "lr", "0", &e) == OB_ERR_INPUT);
    CHECK(ob_hp_set(&hv, "adam", "lr", "1e-3x", &e) == OB_ERR_INPUT);
    CHECK(strstr(e.msg, "not a number") != NULL);
    /* a number a double cannot hold is not called "not a number" */
    CHECK(ob_hp_set(&hv, "adam", "lr", "1e999", &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "'1e999' is out of range for a double") != NULL, "%s", e.msg);
    CHECK(ob_hp_set(&hv, "adam", "beta1", "1e-999", &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "'1e-999' is out of range for a double") != NULL, "%s", e.msg);
    CHECK(ob_hp_set(&hv, "adam", "lr", "inf", &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "'inf' is not a finite number") != NULL, "%s", e.msg);
    {
        double x = 7;
        CHECK(ob_parse_double("1e999", &x) == -2 && ob_parse_double("1e-999", &x) == -2);
        CHECK(ob_parse_double("1e-3x", &x) == -1 && ob_parse_double(" 1", &x) == -1 && x == 7);
        CHECK(ob_parse_double("-2.5e3", &x) == 0 && x == -2500);
        /* hexadecimal, which strtod reads, means no setting */
        CHECK(ob_parse_double("0x10", &x) == -1 && ob_parse_double("-0X1p3", &x) == -1 && x == -2500);
        /* YAML's special floats are what they say, not "not a number" */
        CHECK(ob_parse_double(".inf", &x) == 0 && isinf(x) && x > 0);
        CHECK(ob_parse_double("-.Inf", &x) == 0 && isinf(x) && x < 0);
        CHECK(ob_parse_double(".NaN", &x) == 0 && isnan(x));
        CHECK(ob_parse_double(".infx", &x) == -1);
    }
    CHECK(ob_hp_set(&hv, "adam", "betal", "0.9", &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "did you mean 'beta1'") != NULL, "%s", e.msg);
    /* "adam.beta2 = 0.9" and two settings in one: said in plain words */
    CHECK(ob_hp_set(&hv, "adam", "beta1 ", " 0.9", &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "'beta1 ' (write a setting without spaces around '='") != NULL, "%s", e.msg);
    CHECK(ob_hp_set(&hv, "adam", "beta1", "0.9,eps=1e-8", &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "is not a number (one setting per --set") != NULL, "%s", e.msg);
    CHECK(ob_hp_set(&hv, "adam", "be\xfft\x01", "0.9", &e) == OB_ERR_INPUT); /* bytes shown, not written raw */
    CHECK_MSG(strstr(e.msg, "'be\\xfft\\x01'") != NULL, "%s", e.msg);
    {   /* a name cut short: the one candidate it begins, none when several do or it is under 3 characters */
        static const char *const keys[] = {"lr", "momentum", "weight_decay", "warmup_steps", "filter_bias_and_bn"};
        const char *m = ob_closest_name("mom", keys, 5), *f = ob_closest_name("filter_bias", keys, 5);
        CHECK(m && !strcmp(m, "momentum") && f && !strcmp(f, "filter_bias_and_bn"));
        CHECK(ob_closest_name("w", keys, 5) == NULL && ob_closest_name("wa", keys, 5) == NULL);
        CHECK(ob_closest_name("weig", keys, 5) && ob_closest_name("xyz", keys, 5) == NULL);
        static const char *const two[] = {"warmup_steps", "warmup_frac"};
        CHECK(ob_closest_name("warmup", two, 2) == NULL); /* which one? */
    }
    CHECK(ob_fail_unknown(&e, "workload", "quadr\xe9tic", (const char *const[]){"quadratic"}, 1) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "'quadr\\xe9tic' (did you mean 'quadratic'?)") != NULL, "%s", e.msg);
    {   /* a bound printed with all its digits */
        static const ob_hp_def big[] = {{.name = "vocab", .kind = OB_HP_INT, .def = 256, .min = 3, .max = 4194304}};
        ob_hp_values hb;
        ob_hp_defaults(&hb, big, 1);
        CHECK(ob_hp_set(&hb, "bert", "vocab", "2", &e) == OB_ERR_INPUT);
        CHECK_MSG(strstr(e.msg, "it must be in [3, 4194304]") != NULL, "%s", e.msg);
    }
    CHECK_OK(ob_hp_set_list(&hv, "muon", "nesterov=true,adjust_lr=match_rms_adamw", &e), &e);
    CHECK(ob_hp_get(&hv, "nesterov") == 1 && ob_hp_get(&hv, "adjust_lr") == 1);
    char json[512];
    ob_hp_to_json(&hv, json, sizeof json);
    CHECK_MSG(strcmp(json, "{\"lr\":0.001,\"beta1\":0.949999988,\"nesterov\":true,\"adjust_lr\":\"match_rms_adamw\"}") == 0 ||
                  strstr(json, "\"adjust_lr\":\"match_rms_adamw\"") != NULL,
              "%s", json);
}

static void test_layout(void)
{
    ob_layout l;
    ob_err e;
    ob_layout_init(&l);
    int64_t s1[2] = {3, 5}, s2[1] = {7}, s3[4] = {4, 3, 3, 3};
    CHECK_OK(ob_layout_add(&l, "w", OB_TAG_MATRIX, 2, s1, NULL, &e), &e);
    CHECK_OK(ob_layout_add(&l, "b", OB_TAG_BIAS, 1, s2, NULL, &e), &e);
    CHECK_OK(ob_layout_add(&l, "conv", OB_TAG_CONV, 4, s3, NULL, &e), &e);
    l.t[0].group = 1;
    l.t[1].group = 0;
    CHECK(ob_layout_finalize(&l, &e) == OB_ERR_INPUT); /* conv unrouted */
    CHECK_MSG(strstr(e.msg, "'conv'") != NULL, "%s", e.msg);
    l.t[2].group = 1;
    CHECK_OK(ob_layout_finalize(&l, &e), &e);
    CHECK(l.n_groups == 2);
    CHECK(l.t[1].offset == 0 && l.group_end[0] == 16);
    CHECK(l.t[0].offset == 16 && l.t[2].offset == 32);
    CHECK(l.total == 32 + 112);
    for (int i = 0; i < l.n; i++) CHECK(l.t[i].offset % OB_ALIGN_FLOATS == 0);
    int64_t r, c;
    ob_tensor_matrix_dims(&l.t[2], &r, &c);
    CHECK(r == 4 && c == 27);
    ob_layout_free(&l);

    /* element counts that overflow 64 bits are refused, not wrapped */
    ob_layout_init(&l);
    int64_t huge[2] = {(int64_t)1 << 32, (int64_t)1 << 32}, big[2] = {(int64_t)1 << 29, (int64_t)1 << 30};
    CHECK(ob_layout_add(&l, "huge", OB_TAG_MATRIX, 2, huge, NULL, &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "'huge'") != NULL && strstr(e.msg, "too large") != NULL, "%s", e.msg);
    CHECK(l.n == 0);
    /* each one fits, their sum does not */
    for (int i = 0; i < 2; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "b%d", i);
        CHECK_OK(ob_layout_add(&l, nm, OB_TAG_MATRIX, 2, big, NULL, &e), &e);
        l.t[i].group = 0;
    }
    CHECK(ob_layout_finalize(&l, &e) == OB_ERR_INPUT);
    CHECK_MSG(strstr(e.msg, "'b1'") != NULL, "%s", e.msg);
    CHECK(!l.finalized);
    ob_layout_free(&l);
}

static void test_rng(void)
{
    /* Known-answer test: Philox4x32-10 with zero key and counter (Random123). */
    ob_u32x4 z = ob_philox(0, 0, 0);
    CHECK_MSG(z.v[0] == 0x6627e8d5u && z.v[1] == 0xe169c58du && z.v[2] == 0xbc57ac4cu && z.v[3] == 0x9b00dbd8u,
              "%08x %08x %08x %08x", z.v[0], z.v[1], z.v[2], z.v[3]);
    double s = 0, s2 = 0;
    int n = 200000;
    for (int i = 0; i < n; i++) {
        double x = ob_rng_normal(42, OB_STREAM_DATA, (uint64_t)i);
        s += x;
        s2 += x * x;
    }
    CHECK_NEAR(s / n, 0.0, 0.01);
    CHECK_NEAR(s2 / n, 1.0, 0.02);
    CHECK(ob_rng_uniform(1, 2, 3) == ob_rng_uniform(1, 2, 3));
    CHECK(ob_rng_uniform(1, 2, 3) != ob_rng_uniform(1, 2, 4));
}

/* ob_utf8_check and ob_printable: text kept, control characters and bad
 * bytes escaped, long text cut to fit */
static void test_text(void)
{
    char b[16];
    CHECK(ob_utf8_check("caf\xc3\xa9") == -1 && ob_utf8_check("a\xff") == 1 && ob_utf8_check("\xed\xa0\x80") == 0);
    CHECK(!strcmp(ob_printable("caf\xc3\xa9 1", b, sizeof b), "caf\xc3\xa9 1"));
    CHECK(!strcmp(ob_printable("\x01\xff" "a", b, sizeof b), "\\x01\\xffa"));
    CHECK(!strcmp(ob_printable("a\tb\x7f", b, sizeof b), "a\\x09b\\x7f"));
    /* characters that show as nothing: a zero-width space, a byte order mark */
    CHECK(!strcmp(ob_printable("\xe2\x80\x8bk", b, sizeof b), "\\xe2\\x80\\x8bk"));
    CHECK(!strcmp(ob_printable("\xef\xbb\xbf", b, sizeof b), "\\xef\\xbb\\xbf"));
    CHECK(!strcmp(ob_printable("0123456789abcdefgh", b, sizeof b), "0123456789ab..."));
    CHECK(!strcmp(ob_printable("0123456789abcdef", b, sizeof b), "0123456789ab..."));
    CHECK(!strcmp(ob_printable("0123456789abcde", b, sizeof b), "0123456789abcde")); /* fits exactly */
    CHECK(!strcmp(ob_printable("0123456789a\xff", b, sizeof b), "0123456789a\\xff"));
    CHECK(!strcmp(ob_printable("0123456789ab\xff", b, sizeof b), "0123456789ab..."));
    CHECK(!strcmp(ob_printable("a\xc2\x85z\xc2\xa0", b, sizeof b), "a\\xc2\\x85z\xc2\xa0")); /* C1 control, NBSP */
    CHECK(!strcmp(ob_printable("", b, sizeof b), ""));
}

/* A message longer than ob_err holds keeps its start and its end (the
 * advice), cut between UTF-8 characters; a prefix does not push the end out. */
static void test_long_message(void)
{
    ob_err e;
    char big[3000];
    memset(big, 'k', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    big[630] = '\xc3'; /* an e-acute across the head's cut (byte 640 of the message) */
    big[631] = '\xa9';
    CHECK(ob_fail(&e, OB_ERR_INPUT, "unknown '%s'; give one of a, b", big) == OB_ERR_INPUT);
    CHECK_MSG(strlen(e.msg) < sizeof e.msg && !strncmp(e.msg, "unknown 'kkk", 12), "%.40s", e.msg);
    CHECK_MSG(strstr(e.msg, "kk'; give one of a, b") && e.msg[strlen(e.msg) - 1] == 'b', "%s", e.msg);
    CHECK_MSG(strstr(e.msg, " ... (") && strstr(e.msg, " bytes left out) ... "), "%s", e.msg);
    CHECK_MSG(ob_utf8_check(e.msg) == -1, "cut inside a character: %s", e.msg);
    CHECK(ob_fail(&e, OB_ERR_INPUT, "short %d", 1) == OB_ERR_INPUT && !strcmp(e.msg, "short 1"));
    ob_fail(&e, OB_ERR_INPUT, "%.1000s; do this", big);
    ob_err_prefix(&e, "file.yaml:3: ");
    CHECK_MSG(!strncmp(e.msg, "file.yaml:3: kkk", 16) && strstr(e.msg, "; do this"), "%s", e.msg);
}

int main(void)
{
    test_long_message();
    test_hparams();
    test_layout();
    test_rng();
    test_text();
    return check_done();
}
