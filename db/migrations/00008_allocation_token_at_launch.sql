-- +goose Up
-- An allocation gets its token when it is launched: until then it has none,
-- and no request can authenticate as it.
ALTER TABLE allocations ALTER COLUMN token_hash DROP NOT NULL;

-- +goose Down
DELETE FROM allocations WHERE token_hash IS NULL;
ALTER TABLE allocations ALTER COLUMN token_hash SET NOT NULL;
