-- reagent store, PostgreSQL. Keep in step with migrations/sqlite (same tables, same columns).
CREATE TABLE IF NOT EXISTS sessions (
    id       TEXT PRIMARY KEY,
    created  TEXT NOT NULL,
    updated  TEXT NOT NULL,
    snapshot TEXT
);

CREATE TABLE IF NOT EXISTS runs (
    id                TEXT PRIMARY KEY,
    session_id        TEXT,
    started           TEXT NOT NULL,
    finished          TEXT,
    model             TEXT NOT NULL,
    provider          TEXT NOT NULL,
    tool_mode         TEXT NOT NULL,
    workspace         TEXT NOT NULL,
    task              TEXT NOT NULL,
    outcome           TEXT NOT NULL,
    iterations        BIGINT NOT NULL DEFAULT 0,
    tool_calls        BIGINT NOT NULL DEFAULT 0,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    error             TEXT,
    error_kind        TEXT,
    answer            TEXT,
    pid               BIGINT NOT NULL,
    host              TEXT NOT NULL,
    last_event_at     BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_started ON runs (started, id);
CREATE INDEX IF NOT EXISTS runs_by_outcome ON runs (outcome, started);

CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL,
    seq    BIGINT NOT NULL,
    ts     TEXT NOT NULL,
    type   TEXT NOT NULL,
    json   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE IF NOT EXISTS memory (
    scope    TEXT NOT NULL CHECK (scope IN ('run', 'session')),
    scope_id TEXT NOT NULL,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    updated  TEXT NOT NULL,
    PRIMARY KEY (scope, scope_id, key)
);
