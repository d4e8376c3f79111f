/* plots/style.h - the colour, marker and dash type of each optimizer's
 * series, shared by the report's figures and history's, and the same in
 * every report: sgd is a blue solid line with filled circles wherever it
 * appears, whatever else a report compares. */
#ifndef OB_PLOTS_STYLE_H
#define OB_PLOTS_STYLE_H

/* Colours ("#rrggbb", static strings) of n optimizer configurations in a
 * figure's order; opt_names[i] is the optimizer of configuration i. The first
 * configuration of each optimizer takes that optimizer's own colour (one per
 * optimizer of the registry, by its place there); further configurations of
 * an optimizer (swept hyperparameters), and optimizers the registry does not
 * know, take colours that no optimizer owns, then those of optimizers not in
 * the figure, then every colour again. */
void ob_series_colours(const char *const *opt_names, int n, const char **out);

/* The marker shape (gnuplot point type) and dash type of n optimizer
 * configurations in a figure's order, the same in every report as the
 * colours are: the first configuration of each optimizer takes its
 * optimizer's own (no two of the registry's share both), so adam has the
 * same marker and dashes whatever else is compared; further configurations
 * (swept hyperparameters) and optimizers the registry does not know take an
 * open shape and dashes that no other series of the figure has while there
 * is one. shape or dash may be NULL. */
void ob_series_marks(const char *const *opt_names, int n, int *shape, int *dash);

/* The first optimizer of the registry that has no colour of its own
 * (palette[] in style.c, by registry place) or no marker and dash type
 * (marks[], by name); NULL when every one has both. *what says which. */
const char *ob_series_style_missing(const char **what);

#endif
