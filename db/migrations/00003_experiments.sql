-- +goose Up
-- Experiments, their trials, the allocations that run them, and what the
-- trials report: metrics, checkpoints and logs.
CREATE TABLE experiments (
    id              bigserial PRIMARY KEY,
    project_id      bigint NOT NULL REFERENCES projects (id),
    user_id         bigint NOT NULL REFERENCES users (id),
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    labels          text[] NOT NULL DEFAULT '{}',
    notes           text NOT NULL DEFAULT '',
    state           text NOT NULL,
    archived        boolean NOT NULL DEFAULT false,
    -- The fully expanded config (what trials get) and the YAML as submitted.
    config          jsonb NOT NULL,
    original_config text NOT NULL,
    template        text,
    parent_id       bigint REFERENCES experiments (id) ON DELETE SET NULL,
    -- The searcher's saved state, so a restarted master continues the search.
    searcher_state  jsonb NOT NULL,
    searcher_done   boolean NOT NULL DEFAULT false,
    searcher_failed boolean NOT NULL DEFAULT false,
    seed            bigint NOT NULL,
    -- Failures counted against max_restarts (per experiment, as Determined).
    restarts        int NOT NULL DEFAULT 0,
    progress        double precision NOT NULL DEFAULT 0,
    best_validation double precision,
    priority        int,
    weight          double precision NOT NULL DEFAULT 1,
    max_slots       int,
    created_at      timestamptz NOT NULL DEFAULT now(),
    ended_at        timestamptz
);
CREATE INDEX experiments_project ON experiments (project_id);
CREATE INDEX experiments_state ON experiments (state);

-- The uploaded context directory (tar.gz), apart so experiment rows stay small.
CREATE TABLE experiment_contexts (
    experiment_id bigint PRIMARY KEY REFERENCES experiments (id) ON DELETE CASCADE,
    tgz           bytea NOT NULL
);

CREATE TABLE trials (
    id                bigserial PRIMARY KEY,
    experiment_id     bigint NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    request_id        int NOT NULL, -- the searcher's id for this trial
    state             text NOT NULL,
    hparams           jsonb NOT NULL,
    seed              bigint NOT NULL,
    -- run_id counts the allocations started for the trial (DET_TRIAL_RUN_ID).
    run_id            int NOT NULL DEFAULT 0,
    restarts          int NOT NULL DEFAULT 0,
    steps_completed   bigint NOT NULL DEFAULT 0,
    best_validation   double precision,
    latest_checkpoint uuid,
    progress          double precision NOT NULL DEFAULT 0,
    early_exit        text, -- the reason a trial reported, e.g. EXITED_REASON_INVALID_HP
    runner_state      text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    ended_at          timestamptz,
    UNIQUE (experiment_id, request_id)
);
CREATE INDEX trials_experiment ON trials (experiment_id);

-- An allocation is one run of a task on the resource manager.
CREATE TABLE allocations (
    id            text PRIMARY KEY, -- <task id>.<run>
    task_id       text NOT NULL,
    trial_id      bigint REFERENCES trials (id) ON DELETE CASCADE,
    state         text NOT NULL, -- PENDING, RUNNING, TERMINATED
    slots         int NOT NULL,
    slot_ids      int[] NOT NULL DEFAULT '{}',
    token_hash    bytea NOT NULL UNIQUE,
    preempt       boolean NOT NULL DEFAULT false, -- asked to checkpoint and exit
    preempt_acked boolean NOT NULL DEFAULT false,
    kill_after    timestamptz, -- killed if still running then
    exit_code     int,
    exit_reason   text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    ended_at      timestamptz
);
CREATE INDEX allocations_pending ON allocations (created_at) WHERE state = 'PENDING';
CREATE INDEX allocations_trial ON allocations (trial_id);

CREATE TABLE metrics (
    id              bigserial PRIMARY KEY,
    trial_id        bigint NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
    trial_run_id    int NOT NULL,
    steps_completed bigint NOT NULL,
    group_name      text NOT NULL,
    metrics         jsonb NOT NULL,
    reported_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX metrics_trial_group ON metrics (trial_id, group_name, steps_completed);

CREATE TABLE checkpoints (
    uuid            uuid PRIMARY KEY,
    trial_id        bigint NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
    experiment_id   bigint NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    allocation_id   text NOT NULL,
    task_id         text NOT NULL,
    steps_completed bigint NOT NULL,
    state           text NOT NULL, -- COMPLETED or DELETED
    resources       jsonb NOT NULL,
    size            bigint NOT NULL,
    metadata        jsonb NOT NULL,
    report_time     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX checkpoints_trial ON checkpoints (trial_id, steps_completed);
CREATE INDEX checkpoints_experiment ON checkpoints (experiment_id);

CREATE TABLE task_logs (
    id            bigserial PRIMARY KEY,
    task_id       text NOT NULL,
    allocation_id text NOT NULL,
    time          timestamptz NOT NULL,
    level         text NOT NULL DEFAULT '',
    stdtype       text NOT NULL DEFAULT '',
    rank          int,
    source        text NOT NULL DEFAULT 'task',
    log           text NOT NULL
);
CREATE INDEX task_logs_task ON task_logs (task_id, id);

-- What lists and pages show of an experiment: no config text, no searcher state.
CREATE VIEW experiment_views AS
SELECT e.id, e.project_id, e.user_id, e.name, e.description, e.labels, e.notes, e.state, e.archived,
       e.config, e.template, e.parent_id, e.seed, e.restarts, e.progress, e.best_validation,
       e.priority, e.weight, e.max_slots, e.searcher_done, e.created_at, e.ended_at,
       u.username, p.name AS project_name, p.workspace_id, w.name AS workspace_name,
       (SELECT count(*) FROM trials t WHERE t.experiment_id = e.id)::int AS num_trials
FROM experiments e
JOIN users u ON u.id = e.user_id
JOIN projects p ON p.id = e.project_id
JOIN workspaces w ON w.id = p.workspace_id;

CREATE OR REPLACE VIEW project_views AS
SELECT p.id, p.name, p.description, p.workspace_id, p.archived, p.immutable, p.user_id, p.created_at,
       w.name AS workspace_name, u.username,
       (SELECT count(*) FROM experiments e WHERE e.project_id = p.id)::int AS num_experiments
FROM projects p
JOIN workspaces w ON w.id = p.workspace_id
JOIN users u ON u.id = p.user_id;

-- +goose Down
DROP VIEW experiment_views;
CREATE OR REPLACE VIEW project_views AS
SELECT p.id, p.name, p.description, p.workspace_id, p.archived, p.immutable, p.user_id, p.created_at,
       w.name AS workspace_name, u.username, 0::int AS num_experiments
FROM projects p
JOIN workspaces w ON w.id = p.workspace_id
JOIN users u ON u.id = p.user_id;
DROP TABLE task_logs;
DROP TABLE checkpoints;
DROP TABLE metrics;
DROP TABLE allocations;
DROP TABLE trials;
DROP TABLE experiment_contexts;
DROP TABLE experiments;
