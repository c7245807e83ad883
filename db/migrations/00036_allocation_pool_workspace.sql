-- +goose Up
-- The resource pool and workspace an allocation ran in, recorded when it
-- starts, so that historical usage (det resources allocations) stays with
-- them after its experiment or task moves. NULL for allocations started
-- before: their usage counts under the current pool and workspace.
ALTER TABLE allocations
    ADD COLUMN resource_pool text,
    ADD COLUMN workspace_id bigint REFERENCES workspaces (id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE allocations DROP COLUMN workspace_id, DROP COLUMN resource_pool;
