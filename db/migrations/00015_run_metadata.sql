-- +goose Up
-- What a run (a trial) says about itself with
-- core_context.train.set_metadata: one JSON object per trial, replaced as a
-- whole on each set, as Determined's runs metadata is. A table of its own so
-- the trials row and its change notifications stay as they are.
CREATE TABLE run_metadata (
    trial_id bigint PRIMARY KEY REFERENCES trials (id) ON DELETE CASCADE,
    metadata jsonb NOT NULL CHECK (jsonb_typeof(metadata) = 'object')
);

-- +goose Down
DROP TABLE run_metadata;
