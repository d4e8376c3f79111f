-- results/schema.sql - the optbench results database, schema version 6.
--
-- An optbench database is an SQLite file with PRAGMA application_id = 0x4f424e43
-- ('OBNC') and PRAGMA user_version = the schema version; the meta table repeats
-- both in readable form. results/store.c embeds exactly this text (a unit test
-- checks that the two agree) and creates it in one transaction. The database runs
-- in WAL mode. Times are UTC ISO-8601 text ("2024-05-01T12:00:00.000Z"); a value
-- that was not measured is NULL (the C API uses NaN, or -1 for diverged_step).

CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,       -- 'application', 'schema_version', 'created_by'
    value TEXT NOT NULL
);

-- One row per invocation of `optbench run` (a nightly job adds one per night).
CREATE TABLE IF NOT EXISTS benchmarks (
    id          INTEGER PRIMARY KEY,
    name        TEXT,             -- config name or a label given on the command line
    config      TEXT,             -- the effective configuration (YAML text)
    git_rev     TEXT,             -- revision of the optbench source that ran it ("-dirty": with edits)
    host        TEXT,
    backend     TEXT,             -- cpu | cuda
    device      TEXT,             -- e.g. "CPU (2 threads)" or the GPU name
    created_at  TEXT NOT NULL,
    finished_at TEXT,             -- NULL while running or when interrupted
    shard       TEXT,             -- "K/N" when this process ran shard K of N (v2)
    provenance  TEXT              -- JSON: the sources of a merged benchmark (v2)
);

-- One row per cell of the matrix (workload x optimizer x hyperparameters x lr x seed).
CREATE TABLE IF NOT EXISTS runs (
    id              INTEGER PRIMARY KEY,
    benchmark_id    INTEGER REFERENCES benchmarks(id),
    cell            INTEGER,      -- index in the expanded matrix; a confirmation
                                  -- run: N + pair * 1000 + fresh seed (N cells)
                                  -- -id: a retired confirmation run (kept; the
                                  -- sweep grew: another lr is best, or its seed
                                  -- is now a seed of the sweep)
    workload        TEXT NOT NULL,
    workload_params TEXT,         -- JSON object
    optimizer       TEXT NOT NULL,
    hparams         TEXT,         -- JSON object: optimizer hyperparameters and training settings
    lr              REAL NOT NULL,
    seed            INTEGER NOT NULL,
    backend         TEXT,
    device          TEXT,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending','running','done','diverged','failed','interrupted')),
    steps           INTEGER,      -- planned number of steps
    steps_done      INTEGER,
    final_loss      REAL,         -- mean training loss over the last 10% of steps
    best_loss       REAL,         -- lowest training loss seen
    eval_loss       REAL,         -- final held-out loss
    eval_metric     REAL,         -- final held-out metric (accuracy for classifiers)
    loss_floor      REAL,         -- the workload's irreducible loss, when known
    peak_mem_bytes  INTEGER,      -- high-water mark of backend allocations
    state_bytes     INTEGER,      -- bytes of optimizer state
    step_ms_median  REAL,         -- per-step time after warm-up, recording excluded
    step_ms_p90     REAL,
    items_per_sec   REAL,         -- examples (or tokens) per second
    diverged_step   INTEGER,      -- first step judged diverged; NULL when not
    wall_s          REAL,         -- wall time of the whole run
    started_at      TEXT,
    finished_at     TEXT,
    error           TEXT,         -- message of a failed run
    origin          TEXT,         -- merged runs: "FILE:run ID" it was copied from (v2)
    stage           TEXT,         -- NULL: a cell of the sweep; 'confirm': a fresh seed at its
                                  -- pair's best lr, run after the sweep (v3)
    device_mem_bytes INTEGER,     -- largest device memory in use as the driver reports it: the
                                  -- whole device (context, library workspaces, other processes);
                                  -- NULL on the CPU (v3)
    step_ms_mean    REAL,         -- mean per-step time after warm-up, recording excluded: beside
                                  -- the median, it counts steps that are slow now and then (v4)
    opt_ms_median   REAL,         -- the optimizer's part of a step (from the gradients, summed
    opt_ms_mean     REAL,         -- over the replicas, to the updated parameters), same steps (v4)
    git_rev         TEXT,         -- revision of the optbench that ran it ("A, then B": continued
                                  -- by another); NULL: the benchmark's (v5)
    host            TEXT,         -- machine that ran it, the same way (v5)
    other_cpu       REAL          -- share of the CPUs it could run on (0..1) that other processes
                                  -- kept busy while it ran (a run under 0.25 s: from an earlier
                                  -- run's start; a run continued: the last process's part);
                                  -- NULL: unknown (v6)
);
CREATE INDEX IF NOT EXISTS runs_by_cell ON runs (workload, optimizer, lr, seed);
CREATE INDEX IF NOT EXISTS runs_by_benchmark ON runs (benchmark_id);
-- a benchmark's run of a cell (--resume, the confirmation stage); made on
-- opening for writing where an earlier optbench's database lacks it
CREATE INDEX IF NOT EXISTS runs_by_benchmark_cell ON runs (benchmark_id, cell);

-- Training curve: one row per recorded step.
CREATE TABLE IF NOT EXISTS curves (
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    step      INTEGER NOT NULL,
    loss      REAL,
    grad_norm REAL,
    lr        REAL,               -- learning rate in effect (after the schedule)
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;

-- Held-out evaluations: one row per evaluation; every run that finished without diverging has
-- one at its final step (the only one when eval_every is 0).
CREATE TABLE IF NOT EXISTS evals (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step   INTEGER NOT NULL,
    loss   REAL,
    metric REAL,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;

-- Things that happened during a run: skipped steps, divergence, rollbacks.
CREATE TABLE IF NOT EXISTS events (
    id     INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step   INTEGER,
    kind   TEXT NOT NULL,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS events_by_run ON events (run_id);
