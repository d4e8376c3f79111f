/* core/hparams.h - typed, validated hyperparameters shared by optimizers and
 * workloads.
 *
 * A component declares a table of ob_hp_def (name, kind, default, range, help);
 * values live in a plain double array indexed like the table. ob_hp_set parses
 * and validates one "key=value" and reports bad input with the key, the value,
 * the allowed range and a "did you mean" for near-miss names.
 */
#ifndef OB_CORE_HPARAMS_H
#define OB_CORE_HPARAMS_H

#include <stddef.h>

#include "core/ob.h"

typedef enum ob_hp_kind { OB_HP_FLOAT, OB_HP_INT, OB_HP_BOOL, OB_HP_ENUM } ob_hp_kind;

typedef struct ob_hp_def {
    const char *name;
    ob_hp_kind kind;
    double def;
    double min, max;      /* inclusive bounds unless the *_open flags say so */
    int min_open, max_open;
    const char *choices;  /* OB_HP_ENUM: "a|b|c"; the value is the index */
    const char *help;
} ob_hp_def;

#define OB_HP_MAX 48

typedef struct ob_hp_values {
    const ob_hp_def *defs;
    int n;
    double v[OB_HP_MAX];
    unsigned char set[OB_HP_MAX]; /* 1 when given explicitly */
} ob_hp_values;

void ob_hp_defaults(ob_hp_values *hv, const ob_hp_def *defs, int n);
int ob_hp_index(const ob_hp_def *defs, int n, const char *name);   /* -1 if none */
double ob_hp_get(const ob_hp_values *hv, const char *name);        /* NaN if none */
/* Parse text for key; owner names the component in messages ("adam"). */
ob_status ob_hp_set(ob_hp_values *hv, const char *owner, const char *key,
                    const char *text, ob_err *e);
/* ob_hp_set whose message for an unknown key also considers text_keys, the
 * owner's comma-separated text settings ("route,coeff_file"; NULL: none). */
ob_status ob_hp_set_named(ob_hp_values *hv, const char *owner, const char *key, const char *text,
                          const char *text_keys, ob_err *e);
/* "k=v,k=v" (the replay / --set form without the owner prefix). */
ob_status ob_hp_set_list(ob_hp_values *hv, const char *owner, const char *list, ob_err *e);
/* Compact JSON object of every value ({"lr":0.001,"nesterov":true,...}).
 * Returns the text's length, as snprintf: n or more means buf holds only
 * its start. */
size_t ob_hp_to_json(const ob_hp_values *hv, char *buf, size_t n);
/* Human form of a value ("0.9", "true", "original"). */
void ob_hp_format(const ob_hp_def *d, double v, char *buf, size_t n);

/* "did you mean" support: the closest candidate within a small edit distance,
 * else the one candidate that begins with word (at least 3 characters: a
 * name cut short); NULL when there is none, or several begin with it. */
const char *ob_closest_name(const char *word, const char *const *cands, int n);
int ob_edit_distance(const char *a, const char *b);
/* OB_ERR_INPUT "unknown WHAT 'name' (did you mean 'x'?)", or with the list of
 * known names when none is close. */
ob_status ob_fail_unknown(ob_err *e, const char *what, const char *name, const char *const *known, int n);
/* Parse a full double with no trailing junk: 0 on success, -1 when the text
 * is not a number, -2 when it is one a double cannot hold (overflow, or an
 * underflow to a subnormal or zero). */
int ob_parse_double(const char *s, double *out);

#endif
