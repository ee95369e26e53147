package bunstore

import "github.com/uptrace/bun"

// The bread_* tables, defined once for every dialect as bun models: names,
// NOT NULL, defaults and primary keys in bun's tags, the SQL type of each
// column as a Kind in the kind tag, which the dialect's Schema names. What a
// tag cannot say (foreign keys, indexes, the insertion-order column) is in
// tables below. These models are only ever created, never queried: the row
// types of rows.go are the queries' (TestRowsMatchTables keeps them in step).

// Kind is the portable type of a column; Schema.Types gives its SQL type in
// one dialect.
type Kind string

const (
	// KindID is a short string that is a key, is indexed or names a state
	// (ids, statuses, roles): TEXT, or a bounded string where an engine
	// indexes only those.
	KindID Kind = "id"
	// KindText is text of any length (prompts, titles, content, errors).
	KindText Kind = "text"
	// KindInt is a small count (iterations, an index).
	KindInt Kind = "int"
	// KindBigInt is a Unix millisecond time, a sequence number, a slot.
	KindBigInt Kind = "bigint"
	// KindJSON is a JSON payload returned byte for byte as it was written.
	KindJSON Kind = "json"
	// KindTags is the session tags object, matched by TagConditions and
	// never returned as bytes.
	KindTags Kind = "tags"
)

// Kinds are every Kind, for the dialects' tests.
var Kinds = []Kind{KindID, KindText, KindInt, KindBigInt, KindJSON, KindTags}

type sessionsTable struct {
	bun.BaseModel `bun:"table:bread_sessions"`

	ID        string `bun:"id,pk" kind:"id"`
	CreatedAt int64  `bun:"created_at,notnull" kind:"bigint"`
	UpdatedAt int64  `bun:"updated_at,notnull" kind:"bigint"`
	AgentID   string `bun:"agent_id" kind:"id"`
	Tags      string `bun:"tags,notnull,default:'{}'" kind:"tags"`
	// Owner is core.Session.Owner, NULL for none (migration 0002).
	Owner string `bun:"owner" kind:"id"`
}

// messagesTable has no seq: Schema.MessageSeq defines it, and with it
// which of seq and id is the primary key.
// sessionStateTable is a session's state document (core.SessionStateStore,
// migration 0003), one row per session that has one: a table of its own so
// listing sessions never reads the documents.
type sessionStateTable struct {
	bun.BaseModel `bun:"table:bread_session_state"`

	SessionID string `bun:"session_id,pk" kind:"id"`
	State     string `bun:"state,notnull" kind:"json"`
}

// runSubscriptionsTable holds who asked to hear about a run
// (core.RunSubscriptionStore, migration 0006): one row per subscription,
// listed in insertion order, deleted with the run's session.
type runSubscriptionsTable struct {
	bun.BaseModel `bun:"table:bread_run_subscriptions"`

	RunID     string `bun:"run_id,pk" kind:"id"`
	ID        string `bun:"id,pk" kind:"id"`
	SessionID string `bun:"session_id,notnull" kind:"id"`
	Config    string `bun:"config,notnull" kind:"json"`
	CreatedAt int64  `bun:"created_at,notnull" kind:"bigint"`
}

type messagesTable struct {
	bun.BaseModel `bun:"table:bread_session_messages"`

	ID        string `bun:"id,notnull" kind:"id"`
	SessionID string `bun:"session_id,notnull" kind:"id"`
	Role      string `bun:"role,notnull" kind:"id"`
	Content   string `bun:"content" kind:"json"`
	Timestamp int64  `bun:"timestamp,notnull" kind:"bigint"`
}

type checkpointsTable struct {
	bun.BaseModel `bun:"table:bread_checkpoints"`

	ID           string `bun:"id,pk" kind:"id"`
	AgentID      string `bun:"agent_id,notnull" kind:"id"`
	RunID        string `bun:"run_id,notnull" kind:"id"`
	SessionID    string `bun:"session_id" kind:"id"`
	ToolName     string `bun:"tool_name,notnull" kind:"text"`
	ToolCallID   string `bun:"tool_call_id,notnull" kind:"text"`
	Schema       string `bun:"schema" kind:"json"`
	Prompt       string `bun:"prompt" kind:"text"`
	Kind         string `bun:"kind" kind:"text"`
	Skill        string `bun:"skill" kind:"text"`
	Parent       string `bun:"parent" kind:"json"`
	Pending      string `bun:"pending" kind:"json"`
	CreatedAt    int64  `bun:"created_at,notnull" kind:"bigint"`
	Meta         string `bun:"meta" kind:"json"`
	ClaimedBy    string `bun:"claimed_by" kind:"id"`
	ClaimedUntil int64  `bun:"claimed_until" kind:"bigint"`
	HumanSet     string `bun:"human_set" kind:"json"`
}

type runsTable struct {
	bun.BaseModel `bun:"table:bread_runs"`

	ID           string `bun:"id,pk" kind:"id"`
	AgentID      string `bun:"agent_id,notnull" kind:"id"`
	SessionID    string `bun:"session_id" kind:"id"`
	PipelineID   string `bun:"pipeline_id" kind:"text"`
	StartedBy    string `bun:"started_by" kind:"id"`
	Status       string `bun:"status,notnull" kind:"id"`
	Owner        string `bun:"owner" kind:"id"`
	LeaseUntil   int64  `bun:"lease_until" kind:"bigint"`
	CheckpointID string `bun:"checkpoint_id" kind:"text"`
	Attempt      int64  `bun:"attempt" kind:"bigint"`
	ErrorCode    string `bun:"error_code" kind:"text"`
	CreatedAt    int64  `bun:"created_at,notnull" kind:"bigint"`
	UpdatedAt    int64  `bun:"updated_at,notnull" kind:"bigint"`
	// Fence is the token of the attempt that holds the run
	// (core.RunFence; migration 0005).
	Fence string `bun:"fence" kind:"id"`
}

type joinsTable struct {
	bun.BaseModel `bun:"table:bread_joins"`

	ID          string `bun:"id,pk" kind:"id"`
	Slots       int64  `bun:"slots,notnull" kind:"bigint"`
	Settled     string `bun:"settled,notnull" kind:"text"`
	CreatedAt   int64  `bun:"created_at,notnull" kind:"bigint"`
	CompletedBy int64  `bun:"completed_by" kind:"bigint"`
}

type joinOutputsTable struct {
	bun.BaseModel `bun:"table:bread_join_outputs"`

	JoinID string `bun:"join_id,pk" kind:"id"`
	Slot   int64  `bun:"slot,pk" kind:"bigint"`
	Output string `bun:"output" kind:"json"`
}

type loopsTable struct {
	bun.BaseModel `bun:"table:bread_loops"`

	ID            string `bun:"id,pk" kind:"id"`
	AgentID       string `bun:"agent_id,notnull" kind:"id"`
	SessionID     string `bun:"session_id,notnull" kind:"id"`
	RunID         string `bun:"run_id,notnull" kind:"id"`
	Pool          string `bun:"pool,notnull" kind:"json"`
	Pipeline      string `bun:"pipeline,notnull" kind:"json"`
	MaxIterations int    `bun:"max_iterations,notnull" kind:"int"`
	Status        string `bun:"status,notnull" kind:"id"`
	Iterations    int    `bun:"iterations,notnull,default:0" kind:"int"`
	Result        string `bun:"result" kind:"json"`
	StartedAt     int64  `bun:"started_at,notnull" kind:"bigint"`
	CompletedAt   int64  `bun:"completed_at" kind:"bigint"`
}

type loopIterationsTable struct {
	bun.BaseModel `bun:"table:bread_loop_iterations"`

	ID          string `bun:"id,pk" kind:"id"`
	LoopID      string `bun:"loop_id,notnull" kind:"id"`
	Index       int    `bun:"idx,notnull" kind:"int"`
	Input       string `bun:"input" kind:"json"`
	Output      string `bun:"output" kind:"json"`
	StartedAt   int64  `bun:"started_at,notnull" kind:"bigint"`
	CompletedAt int64  `bun:"completed_at,notnull" kind:"bigint"`
}

type crumbsTable struct {
	bun.BaseModel `bun:"table:bread_crumbs"`

	RunID     string `bun:"run_id,pk" kind:"id"`
	Seq       int64  `bun:"seq,pk" kind:"bigint"`
	SessionID string `bun:"session_id" kind:"id"`
	AgentID   string `bun:"agent_id" kind:"id"`
	Type      string `bun:"type,notnull" kind:"id"`
	Crumb     string `bun:"crumb,notnull" kind:"json"`
	CreatedAt int64  `bun:"created_at,notnull" kind:"bigint"`
}

type taskRunsTable struct {
	bun.BaseModel `bun:"table:bread_task_runs"`

	ID          string `bun:"id,pk" kind:"id"`
	TaskID      string `bun:"task_id,notnull" kind:"id"`
	AgentID     string `bun:"agent_id" kind:"id"`
	SessionID   string `bun:"session_id" kind:"id"`
	RunID       string `bun:"run_id" kind:"id"`
	Model       string `bun:"model,notnull" kind:"json"`
	Input       string `bun:"input" kind:"json"`
	Output      string `bun:"output" kind:"json"`
	Status      string `bun:"status,notnull" kind:"id"`
	Usage       string `bun:"usage" kind:"json"`
	Error       string `bun:"error" kind:"text"`
	DurationMs  int64  `bun:"duration_ms" kind:"bigint"`
	CreatedAt   int64  `bun:"created_at,notnull" kind:"bigint"`
	CompletedAt int64  `bun:"completed_at" kind:"bigint"`
}

type kgNodesTable struct {
	bun.BaseModel `bun:"table:bread_kg_nodes"`

	ID        string `bun:"id,pk" kind:"id"`
	AgentID   string `bun:"agent_id,notnull" kind:"id"`
	SessionID string `bun:"session_id" kind:"id"`
	Label     string `bun:"label,notnull" kind:"text"`
	Data      string `bun:"data,notnull,default:'{}'" kind:"json"`
	CreatedAt int64  `bun:"created_at,notnull" kind:"bigint"`
}

type kgEdgesTable struct {
	bun.BaseModel `bun:"table:bread_kg_edges"`

	ID       string `bun:"id,pk" kind:"id"`
	FromID   string `bun:"from_id,notnull" kind:"id"`
	ToID     string `bun:"to_id,notnull" kind:"id"`
	Relation string `bun:"relation,notnull" kind:"text"`
}

type documentsTable struct {
	bun.BaseModel `bun:"table:bread_documents"`

	ID        string `bun:"id,pk" kind:"id"`
	AgentID   string `bun:"agent_id,notnull" kind:"id"`
	Title     string `bun:"title,notnull" kind:"text"`
	Content   string `bun:"content,notnull" kind:"text"`
	Source    string `bun:"source" kind:"text"`
	CreatedAt int64  `bun:"created_at,notnull" kind:"bigint"`
}

// evalRunsTable is the eval history (migration 0003): one row per run of
// an agent's eval suites, its cases as one JSON list.
type evalRunsTable struct {
	bun.BaseModel `bun:"table:bread_eval_runs"`

	ID         string `bun:"id,pk" kind:"id"`
	AgentID    string `bun:"agent_id,notnull" kind:"id"`
	StartedBy  string `bun:"started_by" kind:"id"`
	CreatedAt  int64  `bun:"created_at,notnull" kind:"bigint"`
	DurationMs int64  `bun:"duration_ms,notnull" kind:"bigint"`
	Passed     int    `bun:"passed,notnull" kind:"int"`
	Total      int    `bun:"total,notnull" kind:"int"`
	Results    string `bun:"results,notnull" kind:"json"`
}

// tableDef is one table: its model and what bun's tags cannot say.
type tableDef struct {
	model any
	// ordered tables get the dialect's insertion-order column (Schema.Serial).
	ordered bool
	// foreignKeys are FOREIGN KEY clauses, without the keywords.
	foreignKeys []string
	indexes     []indexDef
}

// indexDef is one index. ordered appends the insertion-order column to its
// columns where the dialect has one.
type indexDef struct {
	name, columns string
	ordered       bool
}

const (
	sessionCascade = "(session_id) REFERENCES bread_sessions(id) ON DELETE CASCADE"
	messageSeq     = "seq"
)

// tables are the bread_* tables in creation order: a table comes after the
// tables its foreign keys name.
var tables = []tableDef{
	{model: (*sessionsTable)(nil), ordered: true, indexes: []indexDef{
		{name: "idx_bread_sessions_updated", columns: "updated_at"},
	}},
	{model: (*messagesTable)(nil), foreignKeys: []string{sessionCascade}, indexes: []indexDef{
		{name: "idx_bread_session_messages_session", columns: "session_id, " + messageSeq},
	}},
	{model: (*checkpointsTable)(nil), ordered: true, foreignKeys: []string{sessionCascade}, indexes: []indexDef{
		{name: "idx_bread_checkpoints_session", columns: "session_id"},
		{name: "idx_bread_checkpoints_created", columns: "created_at", ordered: true},
	}},
	{model: (*runsTable)(nil), foreignKeys: []string{sessionCascade}, indexes: []indexDef{
		{name: "idx_bread_runs_session", columns: "session_id"},
		{name: "idx_bread_runs_lease", columns: "status, lease_until"},
		{name: "idx_bread_runs_owner", columns: "owner, status"},
	}},
	{model: (*joinsTable)(nil)},
	{model: (*joinOutputsTable)(nil), foreignKeys: []string{"(join_id) REFERENCES bread_joins(id) ON DELETE CASCADE"}},
	{model: (*loopsTable)(nil), ordered: true, indexes: []indexDef{
		{name: "idx_bread_loops_session", columns: "session_id"},
		{name: "idx_bread_loops_agent", columns: "agent_id"},
	}},
	{model: (*loopIterationsTable)(nil), ordered: true, foreignKeys: []string{"(loop_id) REFERENCES bread_loops(id) ON DELETE CASCADE"}, indexes: []indexDef{
		{name: "idx_bread_loop_iterations_loop", columns: "loop_id, idx"},
	}},
	{model: (*crumbsTable)(nil), foreignKeys: []string{sessionCascade}, indexes: []indexDef{
		{name: "idx_bread_crumbs_session", columns: "session_id"},
	}},
	{model: (*taskRunsTable)(nil), ordered: true, indexes: []indexDef{
		{name: "idx_bread_task_runs_task", columns: "task_id"},
		{name: "idx_bread_task_runs_session", columns: "session_id"},
		{name: "idx_bread_task_runs_agent", columns: "agent_id"},
	}},
	{model: (*kgNodesTable)(nil), ordered: true, indexes: []indexDef{
		{name: "idx_bread_kg_nodes_agent", columns: "agent_id, session_id"},
	}},
	{model: (*kgEdgesTable)(nil), foreignKeys: []string{
		"(from_id) REFERENCES bread_kg_nodes(id) ON DELETE CASCADE",
		"(to_id) REFERENCES bread_kg_nodes(id) ON DELETE CASCADE",
	}, indexes: []indexDef{
		{name: "idx_bread_kg_edges_from", columns: "from_id"},
		{name: "idx_bread_kg_edges_to", columns: "to_id"},
	}},
	{model: (*documentsTable)(nil), ordered: true, indexes: []indexDef{
		{name: "idx_bread_documents_agent", columns: "agent_id"},
	}},
	{model: (*evalRunsTable)(nil), indexes: []indexDef{
		{name: "idx_bread_eval_runs_agent", columns: "agent_id, created_at, id"},
	}},
	{model: (*sessionStateTable)(nil), foreignKeys: []string{sessionCascade}},
	{model: (*runSubscriptionsTable)(nil), ordered: true, foreignKeys: []string{sessionCascade}, indexes: []indexDef{
		{name: "idx_bread_run_subscriptions_session", columns: "session_id"},
	}},
}
