package sqlite

// schema is the DDL Migrate runs, statement by statement. Every statement is
// idempotent (IF NOT EXISTS), so Migrate can run at every start.
//
// Conventions: timestamps are INTEGER Unix milliseconds; JSON is TEXT, kept
// byte for byte as the caller wrote it; an optional string or JSON column is
// NULL when empty. Tables other than bread_session_messages rely on SQLite's
// implicit rowid, which is always larger than every row present when a row is
// inserted, to keep insertion order among rows with the same timestamp.
// Messages carry an explicit AUTOINCREMENT seq because their order is the
// conversation.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS bread_sessions (
  id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  agent_id TEXT,
  tags TEXT NOT NULL DEFAULT '{}'
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_sessions_updated ON bread_sessions(updated_at)`,

	`CREATE TABLE IF NOT EXISTS bread_session_messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL REFERENCES bread_sessions(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  content TEXT,
  timestamp INTEGER NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_session_messages_session ON bread_session_messages(session_id, seq)`,

	`CREATE TABLE IF NOT EXISTS bread_checkpoints (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  tool_name TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  schema TEXT,
  prompt TEXT,
  kind TEXT,
  skill TEXT,
  parent TEXT,
  pending TEXT,
  created_at INTEGER NOT NULL,
  meta TEXT,
  claimed_by TEXT,
  claimed_until INTEGER,
  human_set TEXT
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_checkpoints_session ON bread_checkpoints(session_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_checkpoints_created ON bread_checkpoints(created_at)`,

	`CREATE TABLE IF NOT EXISTS bread_runs (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  pipeline_id TEXT,
  started_by TEXT,
  status TEXT NOT NULL,
  owner TEXT,
  lease_until INTEGER,
  checkpoint_id TEXT,
  attempt INTEGER,
  error_code TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_runs_session ON bread_runs(session_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_runs_lease ON bread_runs(status, lease_until)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_runs_owner ON bread_runs(owner, status)`,

	`CREATE TABLE IF NOT EXISTS bread_joins (
  id TEXT PRIMARY KEY,
  slots INTEGER NOT NULL,
  settled TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  completed_by INTEGER
)`,
	`CREATE TABLE IF NOT EXISTS bread_join_outputs (
  join_id TEXT NOT NULL REFERENCES bread_joins(id) ON DELETE CASCADE,
  slot INTEGER NOT NULL,
  output TEXT,
  PRIMARY KEY (join_id, slot)
)`,

	`CREATE TABLE IF NOT EXISTS bread_loops (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  pool TEXT NOT NULL,
  pipeline TEXT NOT NULL,
  max_iterations INTEGER NOT NULL,
  status TEXT NOT NULL,
  iterations INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  started_at INTEGER NOT NULL,
  completed_at INTEGER
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_loops_session ON bread_loops(session_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_loops_agent ON bread_loops(agent_id)`,

	`CREATE TABLE IF NOT EXISTS bread_loop_iterations (
  id TEXT PRIMARY KEY,
  loop_id TEXT NOT NULL REFERENCES bread_loops(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  input TEXT,
  output TEXT,
  started_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_loop_iterations_loop ON bread_loop_iterations(loop_id, idx)`,

	`CREATE TABLE IF NOT EXISTS bread_crumbs (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  agent_id TEXT,
  type TEXT NOT NULL,
  crumb TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_crumbs_session ON bread_crumbs(session_id)`,

	`CREATE TABLE IF NOT EXISTS bread_task_runs (
  id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  agent_id TEXT,
  session_id TEXT,
  run_id TEXT,
  model TEXT NOT NULL,
  input TEXT,
  output TEXT,
  status TEXT NOT NULL,
  usage TEXT,
  error TEXT,
  duration_ms INTEGER,
  created_at INTEGER NOT NULL,
  completed_at INTEGER
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_task_runs_task ON bread_task_runs(task_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_task_runs_session ON bread_task_runs(session_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_task_runs_agent ON bread_task_runs(agent_id)`,

	`CREATE TABLE IF NOT EXISTS bread_kg_nodes (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT,
  label TEXT NOT NULL,
  data TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_kg_nodes_agent ON bread_kg_nodes(agent_id, session_id)`,

	`CREATE TABLE IF NOT EXISTS bread_kg_edges (
  id TEXT PRIMARY KEY,
  from_id TEXT NOT NULL REFERENCES bread_kg_nodes(id) ON DELETE CASCADE,
  to_id TEXT NOT NULL REFERENCES bread_kg_nodes(id) ON DELETE CASCADE,
  relation TEXT NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_kg_edges_from ON bread_kg_edges(from_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_kg_edges_to ON bread_kg_edges(to_id)`,

	`CREATE TABLE IF NOT EXISTS bread_documents (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  title TEXT NOT NULL,
  content TEXT NOT NULL,
  source TEXT,
  created_at INTEGER NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_documents_agent ON bread_documents(agent_id)`,
}

// addedColumns are columns added after the first release of this schema:
// Migrate adds each one a database created earlier lacks (SQLite has no
// ADD COLUMN IF NOT EXISTS).
var addedColumns = []struct{ table, column, ddl string }{
	{"bread_checkpoints", "meta", "TEXT"},
	{"bread_checkpoints", "claimed_by", "TEXT"},
	{"bread_checkpoints", "claimed_until", "INTEGER"},
	{"bread_runs", "started_by", "TEXT"},
	{"bread_checkpoints", "human_set", "TEXT"},
	{"bread_joins", "completed_by", "INTEGER"},
	{"bread_runs", "attempt", "INTEGER"},
}
