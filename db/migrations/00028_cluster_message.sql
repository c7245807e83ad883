-- +goose Up
-- The cluster-wide message (det master cluster-message set, Determined's
-- /api/v1/master/cluster_message): one at a time, shown as a banner on every
-- page of a signed-in user from start_time until end_time (none: until it
-- is cleared). Setting a message replaces the one there was.
CREATE TABLE cluster_message (
    only_one     boolean PRIMARY KEY DEFAULT true CHECK (only_one),
    message      text NOT NULL CHECK (message <> ''),
    start_time   timestamptz NOT NULL,
    end_time     timestamptz CHECK (end_time IS NULL OR end_time > start_time),
    created_by   bigint REFERENCES users (id) ON DELETE SET NULL,
    created_time timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE cluster_message;
