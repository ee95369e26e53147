package postgres

// schema is the DDL Migrate runs, statement by statement, in one
// transaction. Every statement is idempotent, so Migrate can run at every
// start, and concurrent Migrates are serialised by an advisory lock.
//
// Conventions: timestamps are BIGINT Unix milliseconds. Payloads bread must
// return byte for byte (message content, crumbs, checkpoint schema and
// continuation, loop and task payloads) are `json`, which PostgreSQL
// validates but stores as the exact text it was given; `jsonb` would
// reorder keys, drop duplicate keys and reformat numbers and whitespace.
// Only session tags are jsonb, because they are matched with @> and never
// returned as bytes. An optional string or JSON column is NULL when empty.
// `pos` identity columns keep insertion order among rows with one timestamp;
// messages are ordered by their identity `seq`.
//
// The tables match the TypeScript bread's bread_* names and columns. Run
// against a database it created, CREATE TABLE IF NOT EXISTS keeps its
// tables and the ALTER TABLE statements add the columns this store needs;
// its jsonb payload columns then work but do not keep bytes.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS bread_sessions (
  id TEXT PRIMARY KEY,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  agent_id TEXT,
  tags JSONB NOT NULL DEFAULT '{}',
  pos BIGINT GENERATED ALWAYS AS IDENTITY
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_sessions_updated ON bread_sessions(updated_at)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_sessions_tags ON bread_sessions USING GIN (tags jsonb_path_ops)`,

	`CREATE TABLE IF NOT EXISTS bread_session_messages (
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES bread_sessions(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  content JSON,
  timestamp BIGINT NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_session_messages_session ON bread_session_messages(session_id, seq)`,

	`CREATE TABLE IF NOT EXISTS bread_checkpoints (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  tool_name TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  schema JSON,
  prompt TEXT,
  kind TEXT,
  skill TEXT,
  parent JSON,
  pending JSON,
  created_at BIGINT NOT NULL,
  meta JSON,
  claimed_by TEXT,
  claimed_until BIGINT,
  human_set JSON,
  pos BIGINT GENERATED ALWAYS AS IDENTITY
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_checkpoints_session ON bread_checkpoints(session_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_checkpoints_created ON bread_checkpoints(created_at, pos)`,

	`CREATE TABLE IF NOT EXISTS bread_runs (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  pipeline_id TEXT,
  started_by TEXT,
  status TEXT NOT NULL,
  owner TEXT,
  lease_until BIGINT,
  checkpoint_id TEXT,
  attempt BIGINT,
  error_code TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_runs_session ON bread_runs(session_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_runs_lease ON bread_runs(status, lease_until)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_runs_owner ON bread_runs(owner, status)`,

	`CREATE TABLE IF NOT EXISTS bread_joins (
  id TEXT PRIMARY KEY,
  slots BIGINT NOT NULL,
  settled TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  completed_by BIGINT
)`,
	`CREATE TABLE IF NOT EXISTS bread_join_outputs (
  join_id TEXT NOT NULL REFERENCES bread_joins(id) ON DELETE CASCADE,
  slot BIGINT NOT NULL,
  output JSON,
  PRIMARY KEY (join_id, slot)
)`,

	`CREATE TABLE IF NOT EXISTS bread_loops (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  pool JSON NOT NULL,
  pipeline JSON NOT NULL,
  max_iterations INTEGER NOT NULL,
  status TEXT NOT NULL,
  iterations INTEGER NOT NULL DEFAULT 0,
  result JSON,
  started_at BIGINT NOT NULL,
  completed_at BIGINT,
  pos BIGINT GENERATED ALWAYS AS IDENTITY
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_loops_session ON bread_loops(session_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_loops_agent ON bread_loops(agent_id)`,

	`CREATE TABLE IF NOT EXISTS bread_loop_iterations (
  id TEXT PRIMARY KEY,
  loop_id TEXT NOT NULL REFERENCES bread_loops(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  input JSON,
  output JSON,
  started_at BIGINT NOT NULL,
  completed_at BIGINT NOT NULL,
  pos BIGINT GENERATED ALWAYS AS IDENTITY
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_loop_iterations_loop ON bread_loop_iterations(loop_id, idx)`,

	`CREATE TABLE IF NOT EXISTS bread_crumbs (
  run_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  session_id TEXT REFERENCES bread_sessions(id) ON DELETE CASCADE,
  agent_id TEXT,
  type TEXT NOT NULL,
  crumb JSON NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (run_id, seq)
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_crumbs_session ON bread_crumbs(session_id)`,

	`CREATE TABLE IF NOT EXISTS bread_task_runs (
  id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  agent_id TEXT,
  session_id TEXT,
  run_id TEXT,
  model JSON NOT NULL,
  input JSON,
  output JSON,
  status TEXT NOT NULL,
  usage JSON,
  error TEXT,
  duration_ms BIGINT,
  created_at BIGINT NOT NULL,
  completed_at BIGINT,
  pos BIGINT GENERATED ALWAYS AS IDENTITY
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_task_runs_task ON bread_task_runs(task_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_task_runs_session ON bread_task_runs(session_id)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_task_runs_agent ON bread_task_runs(agent_id)`,

	`CREATE TABLE IF NOT EXISTS bread_kg_nodes (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  session_id TEXT,
  label TEXT NOT NULL,
  data JSON NOT NULL DEFAULT '{}',
  created_at BIGINT NOT NULL,
  pos BIGINT GENERATED ALWAYS AS IDENTITY
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
  created_at BIGINT NOT NULL,
  pos BIGINT GENERATED ALWAYS AS IDENTITY
)`,
	`CREATE INDEX IF NOT EXISTS idx_bread_documents_agent ON bread_documents(agent_id)`,
}

// addedColumns are the columns the TypeScript bread's tables lack. Migrate
// adds the missing ones; it checks first because ALTER TABLE locks the
// table exclusively even when it ends up changing nothing.
var addedColumns = []struct{ table, column, ddl string }{
	{"bread_sessions", "pos", "BIGINT GENERATED ALWAYS AS IDENTITY"},
	{"bread_session_messages", "seq", "BIGINT GENERATED ALWAYS AS IDENTITY"},
	{"bread_checkpoints", "kind", "TEXT"},
	{"bread_checkpoints", "skill", "TEXT"},
	{"bread_checkpoints", "parent", "JSON"},
	{"bread_checkpoints", "pending", "JSON"},
	{"bread_checkpoints", "meta", "JSON"},
	{"bread_checkpoints", "claimed_by", "TEXT"},
	{"bread_checkpoints", "claimed_until", "BIGINT"},
	{"bread_runs", "started_by", "TEXT"},
	{"bread_checkpoints", "pos", "BIGINT GENERATED ALWAYS AS IDENTITY"},
	{"bread_loops", "pos", "BIGINT GENERATED ALWAYS AS IDENTITY"},
	{"bread_loop_iterations", "pos", "BIGINT GENERATED ALWAYS AS IDENTITY"},
	{"bread_task_runs", "pos", "BIGINT GENERATED ALWAYS AS IDENTITY"},
	{"bread_kg_nodes", "pos", "BIGINT GENERATED ALWAYS AS IDENTITY"},
	{"bread_documents", "pos", "BIGINT GENERATED ALWAYS AS IDENTITY"},
	{"bread_checkpoints", "human_set", "JSON"},
	{"bread_joins", "completed_by", "BIGINT"},
	{"bread_runs", "attempt", "BIGINT"},
}

// embeddingTables are the tables that get an embedding column when
// Options.Embed is set.
var embeddingTables = []string{"bread_kg_nodes", "bread_documents"}

// migrateLockKey is the pg_advisory_xact_lock key that serialises Migrate
// across processes: concurrent CREATE TABLE IF NOT EXISTS can otherwise
// collide on the catalog. ("bread" in ASCII.)
const migrateLockKey = 0x6272656164
