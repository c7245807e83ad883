-- +goose Up
-- Series are merged off the ingestion path (db/series_async.go): an insert
-- into metrics stores the reports and nothing more, and a merger in the
-- master merges the reports past metric_series_merged.through into their
-- series (in Go, with InsertMetrics's former code) and moves the mark on; a
-- chart reads the stored points and the reports past the mark.
--
-- The mark moves only past reports whose transactions ended: every INSERT
-- into metrics first takes the shared lock below (a statement trigger,
-- before any report gets its id), and the merger takes it alone for an
-- instant to read the largest id; any id up to it is then committed or
-- gone. Mergers take the lock metric_series_merge alone, so two masters (or
-- a restart) never merge a report twice; the merger and the rebuilds of the
-- triggers below take a lock of each trial they write (in trial order).
CREATE TABLE metric_series_merged (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    through bigint NOT NULL -- every visible report with an id up to this is in its series
);
-- Until now each insert merged its reports: all are in their series.
INSERT INTO metric_series_merged (through) SELECT COALESCE(max(id), 0) FROM metrics;

DROP TRIGGER metrics_series_insert ON metrics;
DROP FUNCTION metric_series_insert();

-- +goose StatementBegin
CREATE FUNCTION metric_series_insert_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtext('metric_series_insert'));
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER metrics_series_insert_lock BEFORE INSERT ON metrics
    FOR EACH STATEMENT EXECUTE FUNCTION metric_series_insert_lock();

-- metric_series_lock takes the lock of each trial given whose series are
-- written, in id order (ids past 2^31 share a lock with another: harmless).
-- +goose StatementBegin
CREATE FUNCTION metric_series_lock(trial_ids bigint[]) RETURNS void LANGUAGE sql AS $$
SELECT count(pg_advisory_xact_lock(hashtext('metric_series'), (t % 2147483647)::int))
FROM (SELECT DISTINCT t FROM unnest(trial_ids) t ORDER BY t) t
$$;
-- +goose StatementEnd

-- A rebuild reads the reports up to the mark (the merger merges the rest).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_series_rebuild(trial_ids bigint[], group_names text[]) RETURNS void LANGUAGE plpgsql
SET work_mem = '64MB' SET enable_seqscan = off AS $$
DECLARE i int := 1; n int := COALESCE(array_length(trial_ids, 1), 0); upto bigint;
BEGIN
    SELECT through INTO upto FROM metric_series_merged;
    DELETE FROM metric_points p USING unnest(trial_ids, group_names) AS g(trial_id, group_name)
    WHERE p.trial_id = g.trial_id AND p.group_name = g.group_name;
    DELETE FROM metric_series h USING unnest(trial_ids, group_names) AS g(trial_id, group_name)
    WHERE h.trial_id = g.trial_id AND h.group_name = g.group_name;
    WHILE i <= n LOOP
        PERFORM metric_series_merge(array_agg(r.trial_id), array_agg(r.group_name), array_agg(v.metric), array_agg(r.steps_completed),
            array_agg(r.id), array_agg(v.value), array_agg(r.reported_at), array_agg(v.epoch))
        FROM unnest(trial_ids[i:i + 31], group_names[i:i + 31]) AS g(trial_id, group_name)
        JOIN metrics r ON r.trial_id = g.trial_id AND r.group_name = g.group_name AND NOT r.hidden AND r.id <= upto
        CROSS JOIN LATERAL metric_series_values(r.metrics) v
        HAVING count(*) > 0;
        i := i + 32;
    END LOOP;
END $$;
-- +goose StatementEnd

-- A change of a report the merger has not reached yet changes no series.
-- The trials are locked before the mark is read: a merger that holds them
-- has read the reports as they were, and its mark is read once it is done.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_series_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; groups text[];
BEGIN
    PERFORM metric_series_lock(array_agg(trial_id)) FROM (SELECT trial_id FROM changed UNION SELECT trial_id FROM old_rows) t;
    SELECT array_agg(g.trial_id ORDER BY g.trial_id), array_agg(g.group_name ORDER BY g.trial_id) INTO ids, groups
    FROM (SELECT DISTINCT n.trial_id, n.group_name FROM changed n JOIN old_rows o ON o.id = n.id
          WHERE (o.metrics IS DISTINCT FROM n.metrics OR o.hidden <> n.hidden
             OR o.steps_completed <> n.steps_completed OR o.trial_id <> n.trial_id OR o.group_name <> n.group_name)
            AND o.id <= (SELECT through FROM metric_series_merged)
          UNION SELECT o.trial_id, o.group_name FROM changed n JOIN old_rows o ON o.id = n.id
          WHERE (o.trial_id <> n.trial_id OR o.group_name <> n.group_name) AND o.id <= (SELECT through FROM metric_series_merged)) g;
    IF ids IS NOT NULL THEN
        PERFORM metric_series_rebuild(ids, groups);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_series_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; groups text[];
BEGIN
    PERFORM metric_series_lock(array_agg(trial_id)) FROM old_rows;
    SELECT array_agg(g.trial_id ORDER BY g.trial_id), array_agg(g.group_name ORDER BY g.trial_id) INTO ids, groups
    FROM (SELECT DISTINCT trial_id, group_name FROM old_rows WHERE id <= (SELECT through FROM metric_series_merged)) g;
    IF ids IS NOT NULL THEN
        PERFORM metric_series_rebuild(ids, groups);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- Back to merging at each insert (migration 00021's functions).
DROP TRIGGER metrics_series_insert_lock ON metrics;
DROP FUNCTION metric_series_insert_lock();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_series_rebuild(trial_ids bigint[], group_names text[]) RETURNS void LANGUAGE plpgsql
SET work_mem = '64MB' SET enable_seqscan = off AS $$
DECLARE i int := 1; n int := COALESCE(array_length(trial_ids, 1), 0);
BEGIN
    DELETE FROM metric_points p USING unnest(trial_ids, group_names) AS g(trial_id, group_name)
    WHERE p.trial_id = g.trial_id AND p.group_name = g.group_name;
    DELETE FROM metric_series h USING unnest(trial_ids, group_names) AS g(trial_id, group_name)
    WHERE h.trial_id = g.trial_id AND h.group_name = g.group_name;
    WHILE i <= n LOOP
        PERFORM metric_series_merge(array_agg(r.trial_id), array_agg(r.group_name), array_agg(v.metric), array_agg(r.steps_completed),
            array_agg(r.id), array_agg(v.value), array_agg(r.reported_at), array_agg(v.epoch))
        FROM unnest(trial_ids[i:i + 31], group_names[i:i + 31]) AS g(trial_id, group_name)
        JOIN metrics r ON r.trial_id = g.trial_id AND r.group_name = g.group_name AND NOT r.hidden
        CROSS JOIN LATERAL metric_series_values(r.metrics) v
        HAVING count(*) > 0;
        i := i + 32;
    END LOOP;
    UPDATE metric_series h SET rebuilt_in = txid_current(),
        rebuilt_upto = (SELECT max(m.id) FROM metrics m WHERE m.trial_id = h.trial_id AND m.group_name = h.group_name)
    FROM unnest(trial_ids, group_names) AS g(trial_id, group_name)
    WHERE h.trial_id = g.trial_id AND h.group_name = g.group_name;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_series_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('resolute.series', true) = 'merged' THEN
        RETURN NULL; -- InsertMetrics merges its reports' values itself
    END IF;
    PERFORM 1 FROM trials WHERE id IN (SELECT trial_id FROM changed) ORDER BY id FOR NO KEY UPDATE;
    IF (SELECT count(*) FROM changed) > 5000 THEN
        PERFORM metric_series_rebuild(array_agg(g.trial_id), array_agg(g.group_name))
        FROM (SELECT DISTINCT trial_id, group_name FROM changed) g;
        RETURN NULL;
    END IF;
    PERFORM metric_series_merge(array_agg(r.trial_id), array_agg(r.group_name), array_agg(v.metric), array_agg(r.steps_completed),
        array_agg(r.id), array_agg(v.value), array_agg(r.reported_at), array_agg(v.epoch))
    FROM changed r CROSS JOIN LATERAL metric_series_values(r.metrics) v
    WHERE NOT r.hidden AND NOT EXISTS (SELECT 1 FROM metric_series h
        WHERE h.trial_id = r.trial_id AND h.group_name = r.group_name AND h.rebuilt_in = txid_current() AND r.id <= h.rebuilt_upto)
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_series_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; groups text[];
BEGIN
    SELECT array_agg(g.trial_id ORDER BY g.trial_id), array_agg(g.group_name ORDER BY g.trial_id) INTO ids, groups
    FROM (SELECT DISTINCT n.trial_id, n.group_name FROM changed n JOIN old_rows o ON o.id = n.id
          WHERE o.metrics IS DISTINCT FROM n.metrics OR o.hidden <> n.hidden
             OR o.steps_completed <> n.steps_completed OR o.trial_id <> n.trial_id OR o.group_name <> n.group_name
          UNION SELECT o.trial_id, o.group_name FROM changed n JOIN old_rows o ON o.id = n.id
          WHERE o.trial_id <> n.trial_id OR o.group_name <> n.group_name) g;
    IF ids IS NOT NULL THEN
        PERFORM 1 FROM trials WHERE id = ANY(ids) ORDER BY id FOR NO KEY UPDATE;
        PERFORM metric_series_rebuild(ids, groups);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_series_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; groups text[];
BEGIN
    SELECT array_agg(g.trial_id ORDER BY g.trial_id), array_agg(g.group_name ORDER BY g.trial_id) INTO ids, groups
    FROM (SELECT DISTINCT trial_id, group_name FROM old_rows) g;
    IF ids IS NOT NULL THEN
        PERFORM 1 FROM trials WHERE id = ANY(ids) ORDER BY id FOR NO KEY UPDATE;
        PERFORM metric_series_rebuild(ids, groups);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER metrics_series_insert AFTER INSERT ON metrics REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION metric_series_insert();
-- The reports not merged yet.
SELECT metric_series_rebuild(array_agg(trial_id), array_agg(group_name))
FROM (SELECT DISTINCT trial_id, group_name FROM metrics WHERE id > (SELECT through FROM metric_series_merged)) g;
DROP FUNCTION metric_series_lock(bigint[]);
DROP TABLE metric_series_merged;
