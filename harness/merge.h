/* harness/merge.h - combine results databases (the shards of a sweep) into
 * a new one.
 *
 * Every run of every input is a candidate for its cell, the cell being
 * (workload, workload parameters, optimizer, hyperparameters, lr, seed,
 * steps). Each cell appears once in the output: a finished run (done or
 * diverged) wins over a failed one, which wins over an interrupted or
 * running one, which wins over a pending one; among equals the first input
 * (in the order given) wins. Two finished runs of a cell that disagree
 * (status, steps, final loss or divergence step) are a conflict: reported,
 * the first kept. The output holds one benchmark whose `provenance` column
 * (JSON) lists every input benchmark (file, id, name, shard, host, git
 * revision, backend, device, times, runs taken, and its own provenance when
 * it was itself merged) with the duplicates and conflicts; every run keeps
 * its curve, evaluations and events, and in `origin` the FILE:run ID it came
 * from. Inputs are opened read-only and never changed; the output must not
 * exist yet, and is removed again when the merge fails.
 */
#ifndef OB_HARNESS_MERGE_H
#define OB_HARNESS_MERGE_H

#include <stdint.h>
#include <stdio.h>

#include "core/ob.h"

typedef struct ob_merge_report {
    int sources;        /* input files */
    int benchmarks;     /* benchmarks read from them */
    int runs_in;        /* runs read */
    int cells;          /* runs written: one per cell */
    int duplicates;     /* runs left out because their cell had a better or equal run */
    int conflicts;      /* cells with two finished runs that disagree */
    int unfinished;     /* cells whose best run is pending, running or interrupted */
    int64_t bench_id;   /* the merged benchmark in the output */
} ob_merge_report;

/* Merge inputs[0..n) into the new database out. name (may be NULL) names the
 * merged benchmark; by default the inputs' name. Conflicts and notes go to
 * log (may be NULL). */
ob_status ob_merge(const char *out, const char *const *inputs, int n, const char *name, FILE *log,
                   ob_merge_report *rep, ob_err *e);

#endif
