-- +goose Up
-- The model registry: models group checkpoints as numbered versions;
-- aliases (production, champion...) point at one version and can move.
CREATE TABLE models (
    id           bigserial PRIMARY KEY,
    name         text NOT NULL UNIQUE CHECK (name <> ''),
    description  text NOT NULL DEFAULT '',
    metadata     jsonb NOT NULL DEFAULT '{}',
    labels       text[] NOT NULL DEFAULT '{}',
    notes        text NOT NULL DEFAULT '',
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    user_id      bigint NOT NULL REFERENCES users (id),
    archived     boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE model_versions (
    id              bigserial PRIMARY KEY,
    model_id        bigint NOT NULL REFERENCES models (id) ON DELETE CASCADE,
    version         int NOT NULL,
    -- A registered checkpoint is never deleted: deleting it is refused.
    checkpoint_uuid uuid NOT NULL REFERENCES checkpoints (uuid) ON DELETE RESTRICT,
    name            text NOT NULL DEFAULT '',
    comment         text NOT NULL DEFAULT '',
    notes           text NOT NULL DEFAULT '',
    metadata        jsonb NOT NULL DEFAULT '{}',
    labels          text[] NOT NULL DEFAULT '{}',
    user_id         bigint NOT NULL REFERENCES users (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (model_id, version)
);
CREATE INDEX model_versions_checkpoint ON model_versions (checkpoint_uuid);

CREATE TABLE model_aliases (
    model_id   bigint NOT NULL REFERENCES models (id) ON DELETE CASCADE,
    alias      text NOT NULL,
    version_id bigint NOT NULL REFERENCES model_versions (id) ON DELETE CASCADE,
    PRIMARY KEY (model_id, alias)
);

CREATE VIEW model_views AS
SELECT m.*, u.username, w.name AS workspace_name,
       (SELECT count(*) FROM model_versions v WHERE v.model_id = m.id)::int AS num_versions
FROM models m JOIN users u ON u.id = m.user_id JOIN workspaces w ON w.id = m.workspace_id;

CREATE VIEW model_version_views AS
SELECT v.*, m.name AS model_name, u.username,
       c.trial_id, c.experiment_id, c.steps_completed, c.state AS checkpoint_state, c.size AS checkpoint_size,
       COALESCE((SELECT array_agg(a.alias ORDER BY a.alias) FROM model_aliases a WHERE a.version_id = v.id), '{}')::text[] AS aliases
FROM model_versions v
JOIN models m ON m.id = v.model_id
JOIN users u ON u.id = v.user_id
JOIN checkpoints c ON c.uuid = v.checkpoint_uuid;

-- +goose Down
DROP VIEW model_version_views;
DROP VIEW model_views;
DROP TABLE model_aliases;
DROP TABLE model_versions;
DROP TABLE models;
