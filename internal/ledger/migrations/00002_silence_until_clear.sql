-- A silence made by resolving an episode from Slack lasts until its
-- session's finding of its kind clears, not until a time: the cycle ends
-- it when no scan reports that finding any more.

-- +goose Up
ALTER TABLE silences ADD COLUMN until_clear INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE silences DROP COLUMN until_clear;
