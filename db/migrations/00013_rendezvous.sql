-- +goose Up
-- Where each pod of a multi-pod allocation (Kubernetes) runs: the pods post
-- their address before the task starts and wait until all have, so every
-- pod knows the others' (the chief's first) for distributed training.
CREATE TABLE allocation_rendezvous (
    allocation_id text NOT NULL REFERENCES allocations (id) ON DELETE CASCADE,
    rank          int NOT NULL,  -- the pod's index; 0 is the chief
    addr          text NOT NULL, -- the pod's IP
    slots         int NOT NULL,  -- the pod's slots
    PRIMARY KEY (allocation_id, rank)
);

-- +goose Down
DROP TABLE allocation_rendezvous;
