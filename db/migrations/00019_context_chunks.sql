-- +goose Up
-- Context directories (tar.gz, up to 96 MiB) in chunks of 1 MiB instead of
-- one bytea each: the master stores an upload a chunk at a time from its
-- temporary file and reads one back a chunk at a time at launch, so that it
-- never holds a whole one in memory. No chunks: no context. The chunks are
-- gzip already; PostgreSQL stores them as they are (STORAGE EXTERNAL)
-- rather than trying to compress them again.
CREATE TABLE experiment_context_chunks (
    experiment_id bigint NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    seq           int NOT NULL, -- 0, 1, 2... in the order of the archive
    data          bytea NOT NULL,
    PRIMARY KEY (experiment_id, seq)
);
ALTER TABLE experiment_context_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TABLE task_context_chunks (
    task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq     int NOT NULL,
    data    bytea NOT NULL,
    PRIMARY KEY (task_id, seq)
);
ALTER TABLE task_context_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

INSERT INTO experiment_context_chunks (experiment_id, seq, data)
SELECT c.experiment_id, s.seq, substring(c.tgz FROM s.seq * 1048576 + 1 FOR 1048576)
FROM experiment_contexts c, generate_series(0, (length(c.tgz) - 1) / 1048576) AS s (seq)
WHERE length(c.tgz) > 0;
DROP TABLE experiment_contexts;

INSERT INTO task_context_chunks (task_id, seq, data)
SELECT t.id, s.seq, substring(t.context FROM s.seq * 1048576 + 1 FOR 1048576)
FROM tasks t, generate_series(0, (length(t.context) - 1) / 1048576) AS s (seq)
WHERE length(t.context) > 0;
ALTER TABLE tasks DROP COLUMN context;

-- +goose Down
ALTER TABLE tasks ADD COLUMN context bytea NOT NULL DEFAULT '';
UPDATE tasks t SET context = c.tgz
FROM (SELECT task_id, string_agg(data, ''::bytea ORDER BY seq) AS tgz FROM task_context_chunks GROUP BY task_id) c
WHERE c.task_id = t.id;
DROP TABLE task_context_chunks;

CREATE TABLE experiment_contexts (
    experiment_id bigint PRIMARY KEY REFERENCES experiments (id) ON DELETE CASCADE,
    tgz           bytea NOT NULL
);
INSERT INTO experiment_contexts (experiment_id, tgz)
SELECT e.id, coalesce(c.tgz, ''::bytea)
FROM experiments e
LEFT JOIN (SELECT experiment_id, string_agg(data, ''::bytea ORDER BY seq) AS tgz
           FROM experiment_context_chunks GROUP BY experiment_id) c ON c.experiment_id = e.id;
DROP TABLE experiment_context_chunks;
