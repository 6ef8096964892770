-- Why an episode cleared, as a code (model.Cleared: the metric's label,
-- the report's key) beside the words it was said in. Resolved rows that
-- only have words are mapped from them; words no code has (or none) are
-- 'other'.
--
-- resolved_seq numbers resolves in the order they commit, from the
-- counter 'resolved' (every decision that resolves takes it, so a number
-- is never handed out twice nor seen before a smaller one), and the
-- counter 'observed' is how far the leader has counted them into
-- watchdogd_episode_duration_seconds: each resolve is counted once,
-- whichever process resolved it and whichever replica leads. Rows
-- resolved before this migration have none: nothing counted them then,
-- and a first start must not count a month of them at once.

-- +goose Up
ALTER TABLE episodes ADD COLUMN cleared TEXT NOT NULL DEFAULT '';
ALTER TABLE episodes ADD COLUMN resolved_seq BIGINT;
UPDATE episodes SET cleared = CASE
    WHEN resolution = 'the session ended' THEN 'session_ended'
    WHEN resolution = 'the task was archived' THEN 'task_archived'
    WHEN resolution = 'the session is gone from kandev' THEN 'session_gone'
    WHEN resolution = 'the turn completed' THEN 'turn_completed'
    WHEN resolution = 'the turn was abandoned — a kandev restart?' THEN 'turn_abandoned'
    WHEN resolution = 'the agent produced output' THEN 'agent_output'
    WHEN resolution = 'a turn started' THEN 'turn_started'
    WHEN resolution = 'the turn moved on' THEN 'turn_moved_on'
    WHEN resolution = 'one turn is open again' THEN 'one_open_turn'
    WHEN resolution = 'a new turn started' THEN 'new_turn'
    WHEN resolution = 'the agent replied' THEN 'agent_replied'
    WHEN resolution = 'a message was queued for it' THEN 'queued'
    WHEN resolution = 'kandev no longer marks it interrupted' THEN 'unparked'
    WHEN resolution = 'the session resumed' THEN 'resumed'
    WHEN resolution = 'answered' THEN 'answered'
    WHEN resolution = 'approved' THEN 'approved'
    WHEN resolution = 'rejected in kandev' THEN 'rejected'
    WHEN resolution = 'cancelled in kandev' THEN 'cancelled'
    WHEN resolution = 'expired in kandev (the agent stopped waiting)' THEN 'expired'
    WHEN resolution = 'the question is gone from kandev' THEN 'question_gone'
    WHEN resolution = 'the permission request is gone from kandev' THEN 'permission_gone'
    WHEN resolution = 'no longer waiting for a person' THEN 'no_longer_waiting'
    WHEN resolution = 'the turn closed (a kandev restart?): the permission can no longer be granted' THEN 'permission_orphaned'
    WHEN resolution = 'resolved by hand' THEN 'resolved_by_hand'
    WHEN resolution LIKE 'resolved from Slack by %' THEN 'resolved_from_slack'
    ELSE 'other'
  END
  WHERE resolved_us IS NOT NULL;
CREATE INDEX episodes_resolved_seq ON episodes (resolved_seq) WHERE resolved_seq IS NOT NULL;
CREATE TABLE episode_counters (
  name  TEXT PRIMARY KEY,
  value BIGINT NOT NULL,
  -- holder is who last moved 'observed': a process that cannot tell
  -- whether its commit landed reads it back.
  holder TEXT NOT NULL DEFAULT ''
);
INSERT INTO episode_counters (name, value) VALUES ('resolved', 0);
INSERT INTO episode_counters (name, value) VALUES ('observed', 0);

-- +goose Down
DROP TABLE episode_counters;
DROP INDEX episodes_resolved_seq;
ALTER TABLE episodes DROP COLUMN resolved_seq;
ALTER TABLE episodes DROP COLUMN cleared;
