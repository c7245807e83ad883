-- +goose Up
-- Configuration templates (seeds: "Configuration Templates"): a named piece
-- of experiment or task configuration that configs merge under themselves.
-- The YAML is kept as written, comments and all.
CREATE TABLE templates (
    name         text PRIMARY KEY CHECK (name <> ''),
    config_yaml  text NOT NULL,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    user_id      bigint NOT NULL REFERENCES users (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE VIEW template_views AS
SELECT t.name, t.config_yaml, t.workspace_id, t.user_id, t.created_at, t.updated_at,
       u.username, w.name AS workspace_name
FROM templates t JOIN users u ON u.id = t.user_id JOIN workspaces w ON w.id = t.workspace_id;

-- +goose Down
DROP VIEW template_views;
DROP TABLE templates;
