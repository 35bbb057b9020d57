-- reagent task queue, SQLite. Keep in step with migrations/postgres/0002_queue.sql.
-- Times are epoch milliseconds; ids are uuid v4 text; JSON is text.
CREATE TABLE IF NOT EXISTS tasks (
    id               TEXT PRIMARY KEY,
    task             TEXT NOT NULL,
    spec             TEXT NOT NULL,
    model            TEXT,
    priority         BIGINT NOT NULL DEFAULT 0,
    tags             TEXT NOT NULL DEFAULT '[]',
    state            TEXT NOT NULL CHECK (state IN
                       ('waiting', 'queued', 'running', 'done', 'failed', 'dead', 'cancelled')),
    attempt          BIGINT NOT NULL DEFAULT 0,
    max_attempts     BIGINT NOT NULL,
    run_after_ms     BIGINT NOT NULL,
    lease_owner      TEXT,
    lease_token      TEXT,
    lease_expires_ms BIGINT,
    routed_to        TEXT,
    goal_id          TEXT,
    run_id           TEXT,
    result           TEXT,
    error            TEXT,
    created_ms       BIGINT NOT NULL,
    updated_ms       BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_claimable ON tasks (state, priority DESC, created_ms, id);
CREATE INDEX IF NOT EXISTS tasks_by_lease ON tasks (state, lease_expires_ms);
CREATE INDEX IF NOT EXISTS tasks_by_goal ON tasks (goal_id);

CREATE TABLE IF NOT EXISTS task_deps (
    task_id    TEXT NOT NULL,
    depends_on TEXT NOT NULL,
    PRIMARY KEY (task_id, depends_on)
);
CREATE INDEX IF NOT EXISTS task_deps_by_dependency ON task_deps (depends_on);

CREATE TABLE IF NOT EXISTS task_history (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    worker  TEXT,
    what    TEXT NOT NULL,
    detail  TEXT,
    at_ms   BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS task_history_by_task ON task_history (task_id, id);

CREATE TABLE IF NOT EXISTS workers (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    pid          BIGINT NOT NULL,
    capacity     BIGINT NOT NULL,
    tags         TEXT NOT NULL DEFAULT '[]',
    endpoint     TEXT,
    models       TEXT NOT NULL DEFAULT '[]',
    in_flight    BIGINT NOT NULL DEFAULT 0,
    heartbeat_ms BIGINT NOT NULL,
    started_ms   BIGINT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('up', 'stopped'))
);
