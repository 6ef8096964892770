-- A silence made from a Slack click also covers the episode clicked, by
-- its identity, whatever kind it turns to: a question snoozed or resolved
-- while unanswered stays covered once it is shadowed.

-- +goose Up
ALTER TABLE silences ADD COLUMN identity TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE silences DROP COLUMN identity;
