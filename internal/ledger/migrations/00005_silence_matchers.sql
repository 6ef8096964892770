-- A silence matches with Alertmanager's matchers: a key (workspace_id,
-- task_id, session_id, kind), an operator (=, !=, =~, !~) and a value,
-- every one required, in their own table. The four equality columns a
-- silence had become its = matchers, and go: one way to say what a
-- silence matches. A silence made from a Slack click keeps its identity,
-- until_clear and bound; its session and kind are its matchers now.

-- +goose Up
CREATE TABLE silence_matchers (
  silence_id TEXT NOT NULL REFERENCES silences (id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  name       TEXT NOT NULL,
  op         TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (silence_id, position)
);
INSERT INTO silence_matchers (silence_id, position, name, op, value)
  SELECT id, 0, 'workspace_id', '=', workspace_id FROM silences WHERE workspace_id <> '';
INSERT INTO silence_matchers (silence_id, position, name, op, value)
  SELECT id, 1, 'task_id', '=', task_id FROM silences WHERE task_id <> '';
INSERT INTO silence_matchers (silence_id, position, name, op, value)
  SELECT id, 2, 'session_id', '=', session_id FROM silences WHERE session_id <> '';
INSERT INTO silence_matchers (silence_id, position, name, op, value)
  SELECT id, 3, 'kind', '=', kind FROM silences WHERE kind <> '';
ALTER TABLE silences DROP COLUMN workspace_id;
ALTER TABLE silences DROP COLUMN task_id;
ALTER TABLE silences DROP COLUMN session_id;
ALTER TABLE silences DROP COLUMN kind;

-- +goose Down
-- An older watchdogd knows one equality per key: a silence with any
-- other matcher, or two on a key, would mute more than it says, so it goes.
DELETE FROM silences WHERE id IN (SELECT silence_id FROM silence_matchers WHERE op <> '=');
DELETE FROM silences WHERE id IN (SELECT silence_id FROM silence_matchers GROUP BY silence_id, name HAVING COUNT(*) > 1);
ALTER TABLE silences ADD COLUMN workspace_id TEXT NOT NULL DEFAULT '';
ALTER TABLE silences ADD COLUMN task_id TEXT NOT NULL DEFAULT '';
ALTER TABLE silences ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE silences ADD COLUMN kind TEXT NOT NULL DEFAULT '';
UPDATE silences SET
  workspace_id = COALESCE((SELECT value FROM silence_matchers m WHERE m.silence_id = silences.id AND m.name = 'workspace_id'), ''),
  task_id = COALESCE((SELECT value FROM silence_matchers m WHERE m.silence_id = silences.id AND m.name = 'task_id'), ''),
  session_id = COALESCE((SELECT value FROM silence_matchers m WHERE m.silence_id = silences.id AND m.name = 'session_id'), ''),
  kind = COALESCE((SELECT value FROM silence_matchers m WHERE m.silence_id = silences.id AND m.name = 'kind'), '');
DROP TABLE silence_matchers;
