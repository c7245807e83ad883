-- +goose Up
-- A workspace's settings (Determined's): the pools its work goes to when a
-- config names none, the checkpoint storage its experiments use when their
-- configs name none, the Unix user and group its tasks run as (winning
-- over their owners' links), and the Kubernetes namespace of its pods. A
-- table of its own, so the workspaces row and its view stay as they are; a
-- workspace without a row has no settings. Empty text means "not set".
CREATE TABLE workspace_settings (
    workspace_id         bigint PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    default_compute_pool text NOT NULL DEFAULT '',
    default_aux_pool     text NOT NULL DEFAULT '',
    checkpoint_storage   jsonb,
    -- The agent user and group: all four set, or none. uid and gid 0 are
    -- refused: tasks never run as root.
    agent_uid            bigint CHECK (agent_uid BETWEEN 1 AND 4294967294),
    agent_gid            bigint CHECK (agent_gid BETWEEN 1 AND 4294967294),
    agent_user           text CHECK (agent_user <> ''),
    agent_group          text CHECK (agent_group <> ''),
    namespace            text NOT NULL DEFAULT '',
    CHECK ((agent_uid IS NULL) = (agent_gid IS NULL) AND (agent_uid IS NULL) = (agent_user IS NULL)
           AND (agent_uid IS NULL) = (agent_group IS NULL))
);

-- Resource-pool bindings: a pool with rows here is usable only by the
-- workspaces they name; a pool without is everyone's. Pools live in
-- master.yaml, so pool_name references nothing: a binding of a pool taken
-- out of the config is kept (and shown) until unbound.
CREATE TABLE resource_pool_bindings (
    pool_name    text NOT NULL CHECK (pool_name <> ''),
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    PRIMARY KEY (pool_name, workspace_id)
);
CREATE INDEX resource_pool_bindings_workspace ON resource_pool_bindings (workspace_id);

-- +goose Down
DROP TABLE resource_pool_bindings;
DROP TABLE workspace_settings;
