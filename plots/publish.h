/* plots/publish.h - a report folder replaced whole. A report is written
 * into a fresh hidden stage inside its folder and moved in at the end, file
 * by file: a report that fails leaves the one before in place; files an
 * earlier report wrote there (its list, DIR/.optbench-report) that this one
 * does not write are removed, files no report wrote never touched; two
 * reports into one folder publish one after the other. Internal to plots/. */
#ifndef OB_PLOTS_PUBLISH_H
#define OB_PLOTS_PUBLISH_H

#include <stddef.h>

#include "core/ob.h"

/* A fresh stage for a report into dir (which exists), its path into stage
 * (n bytes; "" on failure), marked with its maker; stages of reports into
 * dir that were stopped before they finished are removed first. Bad input
 * where dir cannot be written. */
ob_status ob_report_stage_open(const char *dir, char *stage, size_t n, ob_err *e);

/* Moves the report in stage into dir, holding dir's publishing lock: its
 * files, then its list; then the files of the earlier report there that
 * this one does not write go. SIGINT, SIGTERM and SIGHUP wait until the
 * report is whole. */
ob_status ob_report_publish(const char *dir, const char *stage, ob_err *e);

/* Removes a stage and what it holds. */
void ob_report_stage_remove(const char *stage);

#endif
