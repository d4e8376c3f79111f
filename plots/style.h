/* plots/style.h - the colour, marker and dash type of each optimizer's
 * series, shared by the report's figures and history's, and the same in
 * every report: sgd is a blue solid line with filled circles wherever it
 * appears, whatever else a report compares. */
#ifndef OB_PLOTS_STYLE_H
#define OB_PLOTS_STYLE_H

/* A colour, "#rrggbb". */
typedef struct ob_colour {
    char hex[8];
} ob_colour;

/* Colours of n optimizer configurations in a figure's order; opt_names[i] is
 * the optimizer of configuration i. The configurations of an optimizer of
 * the registry take shades of its colour (one per optimizer, by its place
 * there): its hue at evenly spaced CIELAB lightnesses (ob_series_shade),
 * dark to light in the order given, which lists a sweep's configurations by
 * their swept values, so that the shade reads as the value and a colour
 * family still means one optimizer; the configuration at the colour's own
 * lightness takes the colour itself (ob_series_family), and a single
 * configuration is that one. Optimizers the registry does not know take
 * colours that no optimizer owns, then those of optimizers not in the
 * figure, then every colour again. */
void ob_series_colours(const char *const *opt_names, int n, ob_colour *out);

/* Shade k (0..m-1) of m of colour hex: its CIELAB hue and chroma (less
 * chroma where sRGB cannot show it) at evenly spaced lightnesses, one of
 * them the colour's own, all within L* 28-76 and up to 11 apart (for up to
 * 5 shades at least 9 Delta E 1976 apart in normal vision and under
 * simulated colour-vision deficiencies: test_series_shades); the colour
 * itself is shade *own (own may be NULL), the darker ones below it and the
 * lighter above. */
void ob_series_shade(const char *hex, int k, int m, ob_colour *out, int *own);

/* Configuration i's place among the configurations of its optimizer in
 * the figure's order: *rank (0 the first) of *count (either may be NULL);
 * returns the configuration that takes the optimizer's own colour, marker
 * and dash type: the one whose shade is the colour itself, at the colour's
 * lightness among the *count shades (as near the middle as L* 28-76 lets
 * the darker ones below it and the lighter above stay apart: adam's, dark,
 * is its first, rmsprop's, light, its last, sgd's the middle one of 3 or
 * 5). An optimizer the registry does not know: i itself, rank 0 of 1. */
int ob_series_family(const char *const *opt_names, int n, int i, int *rank, int *count);

/* The marker shape (gnuplot point type) and dash type of n optimizer
 * configurations in a figure's order, the same in every report as the
 * colours are: the configuration that wears its optimizer's own colour
 * (ob_series_family) takes its own marks (no two of the registry's share
 * both), so adam has the same marker and dashes whatever else is compared;
 * further configurations (swept hyperparameters) and optimizers the
 * registry does not know take, in order, the shape and dashes that best
 * keep the figure readable: no two series of the same colour with the same
 * shape, no two with the same shape and dashes, no filled shape drawn over
 * its open twin, an outline of its own among its optimizer's configurations
 * (square, circle, triangle, down triangle, diamond, pentagon: up to 6
 * configurations), its optimizer's dashes, an open shape, and one no other
 * series has, each while there is one (in that order of importance). shape
 * or dash may be NULL. */
void ob_series_marks(const char *const *opt_names, int n, int *shape, int *dash);

/* The first optimizer of the registry that has no colour of its own
 * (palette[] in style.c, by registry place) or no marker and dash type
 * (marks[], by name), or whose colour is still among the spares; NULL
 * when every one has both. *what says which. */
const char *ob_series_style_missing(const char **what);

/* How many colours no optimizer owns (spare[] in style.c): those that
 * optimizers the registry does not know take first. */
int ob_series_spare_count(void);

#endif
