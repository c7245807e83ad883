-- +goose Up
-- Webhooks (Determined's): a URL called when an experiment or task changes
-- state or a trial logs a line matching a regex. Delivery goes through an
-- outbox so that no event is lost: a state change writes its event in the
-- transaction that made it (the triggers below), the master turns events
-- into one delivery per webhook that wants it, and a delivery is retried
-- with backoff until the receiver accepts it.
CREATE TABLE webhooks (
    id           bigserial PRIMARY KEY,
    name         text NOT NULL UNIQUE CHECK (name <> ''),
    url          text NOT NULL,
    webhook_type text NOT NULL CHECK (webhook_type IN ('DEFAULT', 'SLACK')),
    -- WORKSPACE: every experiment (of the workspace, or of all when
    -- workspace_id is NULL); SPECIFIC: only experiments whose
    -- integrations.webhooks names the webhook.
    mode         text NOT NULL DEFAULT 'WORKSPACE' CHECK (mode IN ('WORKSPACE', 'SPECIFIC')),
    workspace_id bigint REFERENCES workspaces (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_triggers (
    id           bigserial PRIMARY KEY,
    webhook_id   bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    -- EXPERIMENT_STATE_CHANGE {state}, TASK_STATE_CHANGE {state}, TASK_LOG {regex}
    trigger_type text NOT NULL,
    condition    jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX webhook_triggers_type ON webhook_triggers (trigger_type);

-- The outbox: a state change of an experiment or a task, written by the
-- statement that made it when some webhook listens to such changes.
CREATE TABLE webhook_events (
    id          bigserial PRIMARY KEY,
    kind        text NOT NULL, -- experiment or task
    object_id   text NOT NULL,
    state       text NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now()
);

-- One request to one webhook, sent until accepted or out of attempts.
CREATE TABLE webhook_deliveries (
    id              bigserial PRIMARY KEY,
    webhook_id      bigint REFERENCES webhooks (id) ON DELETE SET NULL,
    event_id        uuid NOT NULL,
    event_type      text NOT NULL,
    url             text NOT NULL,
    payload         bytea NOT NULL, -- the exact body sent (and signed)
    attempts        int NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- Set while a master sends it; a master starting clears the claims of
    -- the one before (there is one master per database).
    claimed         boolean NOT NULL DEFAULT false,
    last_error      text NOT NULL DEFAULT '',
    delivered_at    timestamptz,
    failed          boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE delivered_at IS NULL AND NOT failed;

-- The key that signs requests when master.yaml gives none: made once, kept.
ALTER TABLE cluster ADD COLUMN webhook_signing_key text NOT NULL DEFAULT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');

-- +goose StatementBegin
CREATE FUNCTION webhook_state_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state IS DISTINCT FROM OLD.state AND EXISTS (
        SELECT 1 FROM webhook_triggers WHERE trigger_type = TG_ARGV[1]) THEN
        INSERT INTO webhook_events (kind, object_id, state) VALUES (TG_ARGV[0], NEW.id::text, NEW.state);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER experiments_webhook_event AFTER UPDATE OF state ON experiments
    FOR EACH ROW EXECUTE FUNCTION webhook_state_event('experiment', 'EXPERIMENT_STATE_CHANGE');
CREATE TRIGGER tasks_webhook_event AFTER UPDATE OF state ON tasks
    FOR EACH ROW EXECUTE FUNCTION webhook_state_event('task', 'TASK_STATE_CHANGE');

-- +goose Down
DROP TRIGGER tasks_webhook_event ON tasks;
DROP TRIGGER experiments_webhook_event ON experiments;
DROP FUNCTION webhook_state_event();
ALTER TABLE cluster DROP COLUMN webhook_signing_key;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_triggers;
DROP TABLE webhooks;
