package kandevdb

// kandevTables mirrors kandev's tables with the columns watchdogd reads (and a few
// it does not, so a scan that read them by accident would be caught by the
// schema check in a real installation, not here), in DDL both dialects
// accept alike. Indexes are kandev's.
const kandevTables = `
CREATE TABLE tasks (
  id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL DEFAULT '', title TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'TODO', metadata TEXT DEFAULT '{}', archived_at TIMESTAMP,
  is_ephemeral INTEGER NOT NULL DEFAULT 0, parent_id TEXT,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE task_sessions (
  id TEXT PRIMARY KEY, task_id TEXT NOT NULL, state TEXT NOT NULL, name TEXT,
  is_primary INTEGER NOT NULL DEFAULT 0, metadata TEXT DEFAULT '{}', error_message TEXT,
  started_at TIMESTAMP, completed_at TIMESTAMP, updated_at TIMESTAMP);
CREATE TABLE task_session_turns (
  id TEXT PRIMARY KEY, task_session_id TEXT NOT NULL, task_id TEXT NOT NULL,
  started_at TIMESTAMP NOT NULL, completed_at TIMESTAMP, metadata TEXT DEFAULT '{}',
  created_at TIMESTAMP, updated_at TIMESTAMP);
CREATE TABLE task_session_messages (
  id TEXT PRIMARY KEY, task_session_id TEXT NOT NULL, task_id TEXT, turn_id TEXT,
  author_type TEXT NOT NULL DEFAULT 'agent', type TEXT NOT NULL DEFAULT 'message', content TEXT,
  requests_input INTEGER NOT NULL DEFAULT 0, metadata TEXT DEFAULT '{}',
  created_at TIMESTAMP, updated_at TIMESTAMP);
`

// indexes are kandev's secondary indexes, the same on both dialects: those
// of its task store's schema, then those its analytics store creates, on
// whichever database kandev runs, every time kandev starts (its analytics
// repository's ensureStatsIndexes), on the columns modelled here. A kandev database that
// has been opened by kandev once has both. The analytics store's turn index
// is the one kandev index holding completed_at, which D1's first key reads
// on every turn of an active session.
const indexes = `
CREATE INDEX idx_task_sessions_state ON task_sessions(state);
CREATE INDEX idx_task_sessions_task_id ON task_sessions(task_id);
CREATE INDEX idx_turns_session ON task_session_turns(task_session_id);
CREATE INDEX idx_turns_session_started ON task_session_turns(task_session_id, started_at);
CREATE INDEX idx_turns_task ON task_session_turns(task_id);
CREATE INDEX idx_messages_session ON task_session_messages(task_session_id);
CREATE INDEX idx_messages_turn ON task_session_messages(turn_id);
CREATE INDEX idx_messages_session_created ON task_session_messages(task_session_id, created_at);
CREATE INDEX idx_messages_session_updated ON task_session_messages(task_session_id, updated_at);
CREATE INDEX idx_tasks_workspace_created ON tasks(workspace_id, created_at);
CREATE INDEX idx_tasks_updated ON tasks(workspace_id, updated_at);
CREATE INDEX idx_sessions_task_started ON task_sessions(task_id, started_at);
CREATE INDEX idx_turns_session_times ON task_session_turns(task_session_id, started_at, completed_at);
CREATE INDEX idx_messages_author_type ON task_session_messages(task_session_id, author_type, type);
`

// sqliteSchema is kandevTables in a WAL-mode file, as kandev runs it.
const sqliteSchema = "PRAGMA journal_mode = WAL;\n" + kandevTables

// postgresSchema is kandevTables as they are.
const postgresSchema = kandevTables

// queuedSchema is the queued_messages table newer kandev releases have.
const queuedSchema = `
CREATE TABLE queued_messages (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, task_id TEXT, position INTEGER NOT NULL DEFAULT 0,
  content TEXT, queued_at TIMESTAMP, queued_by TEXT);
`
