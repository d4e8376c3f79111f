/* plots/style.h - the colour of each optimizer's series, shared by the
 * report's figures and history's, and the same in every report: sgd is blue
 * wherever it appears, whatever else a report compares. */
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

#endif
