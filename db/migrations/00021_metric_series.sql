-- +goose Up
-- Every visible metric series (a trial's metric of one group) kept
-- downsampled beside the reports, so that a chart of 1,000 trials reads a
-- few dozen rows a trial instead of every report: metric_series holds a
-- series' span and summary (its last, smallest and largest value), and
-- metric_points the reports' values it keeps, copied exactly (a tooltip
-- shows them at full precision). The metrics table stays the whole record.
--
-- The points kept: the steps are cut into buckets of `width` steps (at
-- multiples of width, a power of two), the smallest width that spans the
-- series in fewer than 128 buckets, and each bucket keeps its smallest
-- value (the earliest of equal ones), its largest (the latest of equal
-- ones) and its last report, plus the series' first report. `coarse` marks
-- those of them kept for 16 buckets (width coarse_width) in the same way,
-- for charts of many trials. As widths are powers of two at multiples of
-- themselves, a bucket is the union of smaller ones, so a new report changes
-- only the kept points of the buckets it falls in, and a doubled width merges
-- the kept points exactly: what a merge at each insert keeps is what a
-- rebuild from the reports gives.
--
-- Kept up to date: InsertMetrics (the ingestion path) merges its reports'
-- values in, in Go, in its transaction (db/series_merge.go), and tells the
-- insert trigger so (resolute.series = merged); any other INSERT is merged by
-- the trigger in SQL (a bulk load of more than 5,000 reports is rebuilt from
-- the reports instead). A change of a report's values or of its hidden flag,
-- and a delete, rebuilds the series of that trial and group from its reports
-- (rare: a restart hides reports, a metric reported again at one step).
CREATE TABLE metric_series (
    trial_id     bigint NOT NULL,
    group_name   text NOT NULL,
    metric       text NOT NULL,
    first_step   bigint NOT NULL,
    last_step    bigint NOT NULL,
    width        bigint NOT NULL,
    coarse_width bigint NOT NULL,
    reports      bigint NOT NULL, -- how many visible reports have the metric as a number
    last_value   float8 NOT NULL,
    min_value    float8 NOT NULL,
    max_value    float8 NOT NULL,
    -- A rebuild (in transaction rebuilt_in) read the reports up to id
    -- rebuilt_upto: an insert's trigger that follows it in the same
    -- statement (an INSERT ... ON CONFLICT fires the update's first) does
    -- not merge them again.
    rebuilt_in   bigint,
    rebuilt_upto bigint,
    PRIMARY KEY (trial_id, group_name, metric)
);

CREATE TABLE metric_points (
    trial_id    bigint NOT NULL,
    group_name  text NOT NULL,
    metric      text NOT NULL,
    step        bigint NOT NULL,
    report_id   bigint NOT NULL, -- metrics.id: two runs may report one step
    value       float8 NOT NULL,
    reported_at timestamptz NOT NULL,
    epoch       float8,
    coarse      boolean NOT NULL,
    PRIMARY KEY (trial_id, group_name, metric, step, report_id)
);
CREATE INDEX metric_points_coarse ON metric_points (trial_id, group_name, metric, step) WHERE coarse;

-- metric_series_width is the smallest power of two w that cuts steps f..l
-- into fewer than k buckets of w steps at multiples of w.
-- +goose StatementBegin
CREATE FUNCTION metric_series_width(f bigint, l bigint, k int) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE w bigint := 1;
BEGIN
    WHILE l / w - f / w >= k LOOP
        w := w * 2;
    END LOOP;
    RETURN w;
END $$;
-- +goose StatementEnd

-- metric_series_float is a JSON value as a float8: a number it holds, else
-- NULL (strings, and numbers too large or too small for it).
-- +goose StatementBegin
CREATE FUNCTION metric_series_float(v jsonb) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
SELECT CASE WHEN jsonb_typeof(v) <> 'number' THEN NULL
            WHEN v::numeric = 0 OR abs(v::numeric) BETWEEN 1e-300 AND 1e300 THEN v::numeric::float8 END
$$;
-- +goose StatementEnd

-- metric_series_values are the values of a report (its avg_metrics) that
-- series keep: numbers a float8 holds, with the report's epoch.
-- +goose StatementBegin
CREATE FUNCTION metric_series_values(metrics jsonb) RETURNS TABLE (metric text, value float8, epoch float8) LANGUAGE sql IMMUTABLE AS $$
SELECT kv.key, metric_series_float(kv.value),
       COALESCE(metric_series_float(metrics->'avg_metrics'->'epochs'), metric_series_float(metrics->'avg_metrics'->'epoch'))
FROM jsonb_each(CASE WHEN jsonb_typeof(metrics->'avg_metrics') = 'object' THEN metrics->'avg_metrics' ELSE '{}' END) kv
WHERE metric_series_float(kv.value) IS NOT NULL
$$;
-- +goose StatementEnd

-- metric_series_merge merges values (one a row of the arrays, each of a
-- visible report) into their series: it recomputes the kept points of the
-- coarse buckets the new values fall in (of the whole series when a width
-- grows or a value comes before its first), from the points kept there and
-- the new ones, and writes only what changed. (PL/pgSQL, so that its plan
-- is prepared once a connection.)
-- +goose StatementBegin
CREATE FUNCTION metric_series_merge(trial_ids bigint[], group_names text[], metrics text[], steps bigint[], report_ids bigint[],
    vals float8[], ats timestamptz[], epochs float8[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
WITH n AS (
    SELECT * FROM unnest(trial_ids, group_names, metrics, steps, report_ids, vals, ats, epochs)
      AS n(trial_id, group_name, metric, step, report_id, value, reported_at, epoch))
, ns AS (
    SELECT n.trial_id, n.group_name, n.metric, min(n.step) AS lo, max(n.step) AS hi, count(*) AS cnt,
           min(n.value) AS vmin, max(n.value) AS vmax,
           (array_agg(n.value ORDER BY n.step DESC, n.report_id DESC))[1] AS vlast
    FROM n GROUP BY 1, 2, 3)
, s AS (
    SELECT ns.*, h.first_step AS old_first, h.last_step AS old_last, h.width AS old_w, h.coarse_width AS old_cw,
           h.reports AS old_reports, h.last_value AS old_vlast, h.min_value AS old_vmin, h.max_value AS old_vmax,
           LEAST(ns.lo, h.first_step) AS f, GREATEST(ns.hi, h.last_step) AS l
    FROM ns LEFT JOIN metric_series h USING (trial_id, group_name, metric))
, r AS (
    SELECT s.*, metric_series_width(s.f, s.l, 128) AS w, metric_series_width(s.f, s.l, 16) AS cw FROM s)
, r2 AS (
    SELECT r.*, (r.old_w IS NULL OR r.w <> r.old_w OR r.cw <> r.old_cw OR r.lo < r.old_first OR r.lo < 0) AS whole,
           (r.lo / r.cw) * r.cw AS region FROM r)
, c AS (
    SELECT p.trial_id, p.group_name, p.metric, p.step, p.report_id, p.value, p.reported_at, p.epoch,
           p.coarse AS was_coarse, true AS stored, r2.w, r2.cw, r2.f
    FROM r2 JOIN metric_points p ON p.trial_id = r2.trial_id AND p.group_name = r2.group_name AND p.metric = r2.metric
    WHERE r2.old_w IS NOT NULL AND (r2.whole OR p.step >= r2.region)
    UNION ALL
    SELECT n.trial_id, n.group_name, n.metric, n.step, n.report_id, n.value, n.reported_at, n.epoch,
           false, false, r2.w, r2.cw, r2.f
    FROM n JOIN r2 USING (trial_id, group_name, metric))
, f AS (
    -- one sort: by series, fine bucket, value; the bucket's first row is its
    -- smallest value, its last its largest (the latest of equal ones)
    SELECT c.*, c.step / c.w AS b,
      row_number() OVER fine AS i, count(*) OVER (PARTITION BY c.trial_id, c.group_name, c.metric, c.step / c.w) AS n,
      max(ARRAY[c.step, c.report_id]) OVER (PARTITION BY c.trial_id, c.group_name, c.metric, c.step / c.w) AS last,
      min(ARRAY[c.step, c.report_id]) OVER (PARTITION BY c.trial_id, c.group_name, c.metric) AS first
    FROM c WINDOW fine AS (PARTITION BY c.trial_id, c.group_name, c.metric, c.step / c.w ORDER BY c.value, c.step, c.report_id))
, fk AS (
    SELECT f.*, (f.i = 1 OR f.i = f.n OR ARRAY[f.step, f.report_id] = f.last OR (f.step = f.f AND ARRAY[f.step, f.report_id] = f.first)) AS keep
    FROM f)
, k AS (
    -- the coarse buckets' points, among those the fine ones keep
    SELECT fk.*, fk.keep AND (row_number() OVER coarse = 1
      OR row_number() OVER coarse = count(*) OVER (PARTITION BY fk.trial_id, fk.group_name, fk.metric, fk.keep, fk.step / fk.cw)
      OR ARRAY[fk.step, fk.report_id] = max(ARRAY[fk.step, fk.report_id]) OVER (PARTITION BY fk.trial_id, fk.group_name, fk.metric, fk.keep, fk.step / fk.cw)
      OR (fk.step = fk.f AND ARRAY[fk.step, fk.report_id] = fk.first)) AS coarse
    FROM fk WINDOW coarse AS (PARTITION BY fk.trial_id, fk.group_name, fk.metric, fk.keep, fk.step / fk.cw ORDER BY fk.value, fk.step, fk.report_id))
, gone AS (
    DELETE FROM metric_points p USING k
    WHERE k.stored AND NOT k.keep AND p.trial_id = k.trial_id AND p.group_name = k.group_name AND p.metric = k.metric
      AND p.step = k.step AND p.report_id = k.report_id)
, moved AS (
    UPDATE metric_points p SET coarse = k.coarse FROM k
    WHERE k.stored AND k.keep AND k.coarse <> k.was_coarse AND p.trial_id = k.trial_id AND p.group_name = k.group_name
      AND p.metric = k.metric AND p.step = k.step AND p.report_id = k.report_id)
, added AS (
    INSERT INTO metric_points (trial_id, group_name, metric, step, report_id, value, reported_at, epoch, coarse)
    SELECT k.trial_id, k.group_name, k.metric, k.step, k.report_id, k.value, k.reported_at, k.epoch, k.coarse
    FROM k WHERE NOT k.stored AND k.keep)
INSERT INTO metric_series AS h (trial_id, group_name, metric, first_step, last_step, width, coarse_width, reports, last_value, min_value, max_value)
SELECT r.trial_id, r.group_name, r.metric, r.f, r.l, r.w, r.cw, COALESCE(r.old_reports, 0) + r.cnt,
       CASE WHEN r.old_last IS NULL OR r.hi >= r.old_last THEN r.vlast ELSE r.old_vlast END,
       LEAST(r.vmin, r.old_vmin), GREATEST(r.vmax, r.old_vmax)
FROM r
ON CONFLICT (trial_id, group_name, metric) DO UPDATE SET first_step = EXCLUDED.first_step, last_step = EXCLUDED.last_step,
    width = EXCLUDED.width, coarse_width = EXCLUDED.coarse_width, reports = EXCLUDED.reports,
    last_value = EXCLUDED.last_value, min_value = EXCLUDED.min_value, max_value = EXCLUDED.max_value;
END $$;
-- +goose StatementEnd

-- metric_series_rebuild rebuilds the series of the trials and groups given
-- (pairwise) from their visible reports, 32 pairs at a time, through the
-- index of metrics (a bulk load's trigger runs before the new reports have
-- statistics, and a plan that scanned the table would scan it per chunk).
-- +goose StatementBegin
CREATE FUNCTION metric_series_rebuild(trial_ids bigint[], group_names text[]) RETURNS void LANGUAGE plpgsql
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

-- The triggers lock the trials first, in id order (as InsertMetrics does
-- after), so two writers of one series never merge at once. An insert of
-- many reports (a bulk load) rebuilds its series from the reports instead,
-- a few trials at a time.
-- +goose StatementBegin
CREATE FUNCTION metric_series_insert() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE FUNCTION metric_series_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE FUNCTION metric_series_delete() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER metrics_series_update AFTER UPDATE ON metrics REFERENCING OLD TABLE AS old_rows NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION metric_series_update();
CREATE TRIGGER metrics_series_delete AFTER DELETE ON metrics REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_series_delete();

-- The reports stored before: every series built once.
SELECT metric_series_rebuild(array_agg(trial_id), array_agg(group_name))
FROM (SELECT DISTINCT trial_id, group_name FROM metrics) g;

-- +goose Down
DROP TRIGGER metrics_series_delete ON metrics;
DROP TRIGGER metrics_series_update ON metrics;
DROP TRIGGER metrics_series_insert ON metrics;
DROP FUNCTION metric_series_delete();
DROP FUNCTION metric_series_update();
DROP FUNCTION metric_series_insert();
DROP FUNCTION metric_series_rebuild(bigint[], text[]);
DROP FUNCTION metric_series_merge(bigint[], text[], text[], bigint[], bigint[], float8[], timestamptz[], float8[]);
DROP FUNCTION metric_series_values(jsonb);
DROP FUNCTION metric_series_float(jsonb);
DROP FUNCTION metric_series_width(bigint, bigint, int);
DROP TABLE metric_points;
DROP TABLE metric_series;
