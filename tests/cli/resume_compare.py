#!/usr/bin/env python3
"""tests/cli/resume_compare.py REF.db TEST.db [--cells N]

Compares the results of two databases cell by cell (by cell index, the
newest benchmark with runs of each): status, steps, final/best/eval loss,
divergence step, and every curve point, evaluation and event (but the
"resumed" and "restarted" events, which record a stop, not a result), exactly (bit
for bit). Also checks that each curve has no gap and no duplicate. Used by
the resume, signal, shard and concurrency tests. Exit 0 when identical."""
import sqlite3
import sys


def load(path):
    db = sqlite3.connect(path)
    q = lambda s, *a: db.execute(s, a).fetchall()
    runs = {}
    for (bid,) in q("select distinct benchmark_id from runs order by benchmark_id"):
        # a retired confirmation run (cell -id: it confirmed an lr that is no
        # longer the best, or ran a seed the grown sweep runs now) is no cell
        for row in q("select id, cell, workload, optimizer, lr, seed, status, steps_done, final_loss, best_loss, "
                     "eval_loss, eval_metric, diverged_step from runs where benchmark_id=? and cell >= 0", bid):
            rid, cell = row[0], row[1]
            curve = q("select step, loss, grad_norm, lr from curves where run_id=? order by step", rid)
            evals = q("select step, loss, metric from evals where run_id=? order by step", rid)
            # a 'resumed' or 'restarted' event records that the run was stopped, not a result
            events = q("select step, kind, detail from events where run_id=? and kind NOT IN ('resumed', 'restarted') "
                       "order by step, kind, detail", rid)
            runs[cell] = (row[2:], curve, evals, events, rid)
    return runs


def main():
    ref, test = load(sys.argv[1]), load(sys.argv[2])
    bad = 0
    if sorted(ref) != sorted(test):
        print(f"cells differ: {sorted(ref)} vs {sorted(test)}")
        bad += 1
    for cell in sorted(ref):
        if cell not in test:
            continue
        a, b = ref[cell], test[cell]
        for what, x, y in (("run", a[0], b[0]), ("curve", a[1], b[1]), ("evals", a[2], b[2]), ("events", a[3], b[3])):
            if x != y:
                bad += 1
                if isinstance(x, list):
                    diff = [(i, p, r) for i, (p, r) in enumerate(zip(x, y)) if p != r][:3]
                    print(f"cell {cell}: {what} differs: {len(x)} vs {len(y)} rows; first differences {diff}")
                else:
                    print(f"cell {cell}: {what} differs: {x} vs {y}")
        steps = [p[0] for p in b[1]]
        status, steps_done = b[0][4], b[0][5]
        if steps != list(range(1, len(steps) + 1)):
            print(f"cell {cell}: the curve has gaps or duplicates")
            bad += 1
        if status == "done" and len(steps) != steps_done:
            print(f"cell {cell}: {len(steps)} curve points for {steps_done} steps")
            bad += 1
    print(f"{len(ref)} cells compared, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
