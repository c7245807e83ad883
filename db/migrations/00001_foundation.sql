-- +goose Up
-- The cluster this database belongs to: one row, made at first start.
CREATE TABLE cluster (
    only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    cluster_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id            bigserial PRIMARY KEY,
    username      text NOT NULL UNIQUE CHECK (username <> ''),
    display_name  text NOT NULL DEFAULT '',
    -- '' means no password: login with an empty password (seeds: "Default Password").
    password_hash text NOT NULL DEFAULT '',
    admin         boolean NOT NULL DEFAULT false,
    active        boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Sessions of the UI (cookie) and of the API (bearer token): we keep only a
-- hash of the token.
CREATE TABLE sessions (
    id         bigserial PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_id ON sessions (user_id);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

CREATE TABLE workspaces (
    id         bigserial PRIMARY KEY,
    name       text NOT NULL UNIQUE CHECK (name <> ''),
    archived   boolean NOT NULL DEFAULT false,
    immutable  boolean NOT NULL DEFAULT false,
    user_id    bigint NOT NULL REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
    id           bigserial PRIMARY KEY,
    name         text NOT NULL CHECK (name <> ''),
    description  text NOT NULL DEFAULT '',
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    archived     boolean NOT NULL DEFAULT false,
    immutable    boolean NOT NULL DEFAULT false,
    user_id      bigint NOT NULL REFERENCES users (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);

-- What pages and the API show of a workspace or project: the row plus its
-- owner's name and counts. Later migrations redefine these views as
-- experiments and models arrive.
CREATE VIEW workspace_views AS
SELECT w.id, w.name, w.archived, w.immutable, w.user_id, w.created_at,
       u.username,
       (SELECT count(*) FROM projects p WHERE p.workspace_id = w.id)::int AS num_projects
FROM workspaces w JOIN users u ON u.id = w.user_id;

CREATE VIEW project_views AS
SELECT p.id, p.name, p.description, p.workspace_id, p.archived, p.immutable, p.user_id, p.created_at,
       w.name AS workspace_name, u.username, 0::int AS num_experiments
FROM projects p
JOIN workspaces w ON w.id = p.workspace_id
JOIN users u ON u.id = p.user_id;

-- +goose Down
DROP VIEW project_views;
DROP VIEW workspace_views;
DROP TABLE projects;
DROP TABLE workspaces;
DROP TABLE sessions;
DROP TABLE users;
DROP TABLE cluster;
