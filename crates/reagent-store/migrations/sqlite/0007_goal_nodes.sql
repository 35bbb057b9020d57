-- reagent hub, SQLite. Keep in step with migrations/postgres/0007_goal_nodes.sql.
-- The graph node a task the hub added for a goal is: `<goal id>/<round>/<node id>`, NULL for
-- tasks people add. Unique, so a goal's node becomes one task however often a (new) leader
-- retries its dispatch: the insert is `ON CONFLICT DO NOTHING` and the stored task is adopted.
ALTER TABLE tasks ADD COLUMN goal_node TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS tasks_by_goal_node ON tasks (goal_node);
