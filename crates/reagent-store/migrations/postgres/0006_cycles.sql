-- `reagent cycles` experiments, PostgreSQL. Keep in step with migrations/sqlite (same tables, same columns).
-- One row per experiment (its resolved config as JSON, status, cycles done); one row per finished
-- cycle (reflection, metrics JSON, cut short or not); every JSONL-shaped event; the experiment's
-- memory (its tools' key-value store); and the evaluator models' ratings.
CREATE TABLE IF NOT EXISTS cycle_experiments (
    id          TEXT PRIMARY KEY,
    created     TEXT NOT NULL,
    updated     TEXT NOT NULL,
    status      TEXT NOT NULL,
    model       TEXT NOT NULL,
    cycles      BIGINT NOT NULL,
    cycles_done BIGINT NOT NULL,
    config      TEXT NOT NULL,
    -- The process running it (a `running` row whose process is gone reads `interrupted`).
    owner_pid   BIGINT NOT NULL,
    owner_host  TEXT NOT NULL,
    heartbeat   BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS cycle_experiments_by_created ON cycle_experiments (created, id);

CREATE TABLE IF NOT EXISTS cycle_records (
    experiment_id TEXT NOT NULL,
    cycle         BIGINT NOT NULL,
    started       TEXT NOT NULL,
    finished      TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    cut_short     BIGINT NOT NULL,
    reflection    TEXT NOT NULL,
    thinking      TEXT NOT NULL,
    metrics       TEXT NOT NULL,
    PRIMARY KEY (experiment_id, cycle)
);

CREATE TABLE IF NOT EXISTS cycle_events (
    experiment_id TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    cycle         BIGINT NOT NULL,
    ts            TEXT NOT NULL,
    event_type    TEXT NOT NULL,
    payload       TEXT NOT NULL,
    PRIMARY KEY (experiment_id, seq)
);

CREATE TABLE IF NOT EXISTS cycle_memory (
    experiment_id TEXT NOT NULL,
    key           TEXT NOT NULL,
    value         TEXT NOT NULL,
    updated       TEXT NOT NULL,
    PRIMARY KEY (experiment_id, key)
);

CREATE TABLE IF NOT EXISTS cycle_ratings (
    id            TEXT PRIMARY KEY,
    experiment_id TEXT NOT NULL,
    evaluator     TEXT NOT NULL,
    created       TEXT NOT NULL,
    rating        BIGINT,
    justification TEXT NOT NULL,
    reply         TEXT NOT NULL,
    error         TEXT
);
CREATE INDEX IF NOT EXISTS cycle_ratings_by_experiment ON cycle_ratings (experiment_id, created);
