-- reagent eval results, PostgreSQL. Keep in step with migrations/sqlite (same tables, same columns).
-- One row per `reagent eval` run: a few fields to list and find it by, and the whole result
-- document (reagent-eval's JSON, opaque to the store).
CREATE TABLE IF NOT EXISTS eval_results (
    id       TEXT PRIMARY KEY,
    created  TEXT NOT NULL,
    suite    TEXT NOT NULL,
    model    TEXT NOT NULL,
    provider TEXT NOT NULL,
    passed   BIGINT NOT NULL,
    total    BIGINT NOT NULL,
    document TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS eval_results_by_created ON eval_results (created, id);
