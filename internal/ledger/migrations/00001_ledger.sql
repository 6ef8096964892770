-- watchdogd's own store (never kandev's). One file serves SQLite and
-- PostgreSQL: times are BIGINT microseconds since the Unix epoch.

-- +goose Up
CREATE TABLE episodes (
  id               TEXT PRIMARY KEY,
  identity         TEXT NOT NULL,
  kind             TEXT NOT NULL,
  session_id       TEXT NOT NULL,
  task_id          TEXT NOT NULL,
  workspace_id     TEXT NOT NULL,
  turn_id          TEXT NOT NULL DEFAULT '',
  pending_id       TEXT NOT NULL DEFAULT '',
  task_title       TEXT NOT NULL,
  since_us         BIGINT NOT NULL,
  opened_us        BIGINT NOT NULL,
  last_seen_us     BIGINT NOT NULL,
  missing_since_us BIGINT,
  resolved_us      BIGINT,
  resolution       TEXT NOT NULL DEFAULT '',
  kind_changes     INTEGER NOT NULL DEFAULT 0,
  finding          TEXT NOT NULL
);
-- One open episode per identity: two processes can never open it twice.
CREATE UNIQUE INDEX episodes_open_identity ON episodes (identity) WHERE resolved_us IS NULL;
CREATE INDEX episodes_resolved ON episodes (resolved_us);

CREATE TABLE actions (
  key             TEXT PRIMARY KEY,
  episode_id      TEXT NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
  seq             TEXT NOT NULL,
  step            INTEGER NOT NULL,
  repeat_no       INTEGER NOT NULL,
  action          TEXT NOT NULL,
  channel         TEXT NOT NULL DEFAULT '',
  mention         TEXT NOT NULL DEFAULT '',
  parent_key      TEXT NOT NULL DEFAULT '',
  digest          TEXT NOT NULL,
  body            TEXT NOT NULL,
  state           TEXT NOT NULL,
  created_us      BIGINT NOT NULL,
  updated_us      BIGINT NOT NULL,
  next_attempt_us BIGINT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  uncertain       INTEGER NOT NULL DEFAULT 0,
  claim_token     TEXT NOT NULL DEFAULT '',
  claimed_by      TEXT NOT NULL DEFAULT '',
  claimed_us      BIGINT NOT NULL DEFAULT 0,
  result_channel  TEXT NOT NULL DEFAULT '',
  result_ts       TEXT NOT NULL DEFAULT '',
  error           TEXT NOT NULL DEFAULT '',
  conflicts       INTEGER NOT NULL DEFAULT 0,
  conflict_digest TEXT NOT NULL DEFAULT ''
);
CREATE INDEX actions_due ON actions (state, next_attempt_us);
CREATE INDEX actions_episode ON actions (episode_id);

CREATE TABLE leases (
  name       TEXT PRIMARY KEY,
  holder     TEXT NOT NULL,
  term       BIGINT NOT NULL,
  expires_us BIGINT NOT NULL
);

CREATE TABLE silences (
  id           TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL DEFAULT '',
  task_id      TEXT NOT NULL DEFAULT '',
  session_id   TEXT NOT NULL DEFAULT '',
  kind         TEXT NOT NULL DEFAULT '',
  comment      TEXT NOT NULL DEFAULT '',
  created_by   TEXT NOT NULL DEFAULT '',
  created_us   BIGINT NOT NULL,
  until_us     BIGINT NOT NULL,
  expired_us   BIGINT
);

-- A Slack 429 closes a channel until its Retry-After has passed, across
-- cycles and restarts.
CREATE TABLE channel_gates (
  channel  TEXT PRIMARY KEY,
  until_us BIGINT NOT NULL
);

-- +goose Down
DROP TABLE channel_gates;
DROP TABLE silences;
DROP TABLE leases;
DROP TABLE actions;
DROP TABLE episodes;
