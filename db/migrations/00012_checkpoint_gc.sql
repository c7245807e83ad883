-- +goose Up
-- The checkpoints each CHECKPOINT_GC task deletes. On Kubernetes the master
-- cannot reach the storage on the nodes, so a task does it in a pod; its
-- checkpoints are marked deleted once it exits 0. While such a task lives,
-- no other one is given the same checkpoints.
CREATE TABLE checkpoint_gc (
    task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    uuid    uuid NOT NULL REFERENCES checkpoints (uuid) ON DELETE CASCADE,
    PRIMARY KEY (task_id, uuid)
);
CREATE INDEX checkpoint_gc_uuid ON checkpoint_gc (uuid);

-- +goose Down
DROP TABLE checkpoint_gc;
