-- reagent hub, SQLite. Keep in step with migrations/postgres (same tables, same columns).
-- The hub's lease: one row per hub group; `epoch` grows by one at each change of holder and is
-- the fencing token every hub write checks.
CREATE TABLE IF NOT EXISTS hub_leader (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    epoch       BIGINT NOT NULL,
    expires_ms  BIGINT NOT NULL,
    acquired_ms BIGINT NOT NULL
);

-- The state machine's current state; `paused` is set by `reagent hub pause|resume`.
CREATE TABLE IF NOT EXISTS hub_state (
    name     TEXT PRIMARY KEY,
    state    TEXT NOT NULL,
    since_ms BIGINT NOT NULL,
    paused   BIGINT NOT NULL DEFAULT 0,
    epoch    BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS hub_transitions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    reason     TEXT NOT NULL,
    epoch      BIGINT NOT NULL,
    at_ms      BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS hub_transitions_by_name ON hub_transitions (name, id);

-- Model servers the hub watches: their models and health.
CREATE TABLE IF NOT EXISTS endpoints (
    url                  TEXT PRIMARY KEY,
    models               TEXT NOT NULL DEFAULT '[]',
    healthy              BIGINT NOT NULL DEFAULT 1,
    consecutive_failures BIGINT NOT NULL DEFAULT 0,
    last_check_ms        BIGINT,
    last_error           TEXT,
    changed_ms           BIGINT NOT NULL
);

-- What the hub did to heal (and other notable acts), for cooldowns, caps and `hub status`.
CREATE TABLE IF NOT EXISTS hub_actions (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    name    TEXT NOT NULL,
    kind    TEXT NOT NULL,
    target  TEXT NOT NULL,
    outcome TEXT NOT NULL,
    detail  TEXT,
    epoch   BIGINT NOT NULL,
    at_ms   BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS hub_actions_by_target ON hub_actions (kind, target, at_ms);

-- Goals: decomposed by the hub's model into a task graph, dispatched, verified.
CREATE TABLE IF NOT EXISTS goals (
    id         TEXT PRIMARY KEY,
    text       TEXT NOT NULL,
    spec       TEXT NOT NULL,
    state      TEXT NOT NULL,
    graph      TEXT,
    tasks      TEXT,
    verdict    TEXT,
    detail     TEXT,
    rounds     BIGINT NOT NULL DEFAULT 0,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS goals_by_state ON goals (state, created_ms);

-- The hub's own model calls, per state and per hour (epoch ms / 3 600 000).
CREATE TABLE IF NOT EXISTS hub_cost (
    state TEXT NOT NULL,
    hour  BIGINT NOT NULL,
    calls BIGINT NOT NULL,
    PRIMARY KEY (state, hour)
);
