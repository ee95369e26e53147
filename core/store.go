package core

import (
	"context"
	"encoding/json"
	"time"
)

// BreadStore is the storage port: sessions and their messages, and HITL
// checkpoints. Every engine needs one; there is no implicit default.
//
// A store may implement more, discovered by type assertion the way io.WriterTo
// is: LoopStore (agent-driven loops), CrumbLog (catch-up on the run stream),
// TaskRunStore (task audit),
// KnowledgeStore, DocumentStore, EvalRunStore (eval history),
// RunSubscriptionStore (who asked to hear about a run), Migrator
// (schema at Start) and io.Closer
// (released at Stop). core/storetest checks every contract; every adapter
// runs it.
//
// Methods that look one record up return an error matching the code's
// sentinel when it does not exist (errors.Is(err, ErrSessionNotFound)).
// All timestamps are Unix milliseconds, as on the original's wire.
type BreadStore interface {
	SessionStore
	CheckpointStore
}

// SessionStore keeps conversations: sessions with tags and their ordered
// messages.
type SessionStore interface {
	// CreateSession creates a session; an empty ID gets a generated one.
	// The store keeps NewSession.Owner as the session's Owner.
	CreateSession(ctx context.Context, s NewSession) (Session, error)
	GetSession(ctx context.Context, id string) (Session, error)
	// ListSessions returns sessions carrying every tag in filter.Tags (and
	// owned by filter.Owner, when set).
	ListSessions(ctx context.Context, filter SessionFilter) ([]Session, error)
	// DeleteSession removes a session with its messages, checkpoints and
	// logged crumbs. Deleting a missing session is not an error.
	DeleteSession(ctx context.Context, id string) error
	// CleanupSessions deletes, with the same cascade, every session not
	// updated within opts.OlderThan and carrying every tag in opts.Tags, and
	// returns how many it deleted. A zero OlderThan deletes nothing: tags
	// alone never delete. A set opts.Owner deletes only that owner's.
	CleanupSessions(ctx context.Context, opts CleanupOptions) (int, error)
	// GetMessages returns a session's messages in the order they were added.
	GetMessages(ctx context.Context, sessionID string) ([]SessionMessage, error)
	// AddMessage appends a message and touches the session's UpdatedAt. The
	// store assigns ID and SessionID. A missing session is
	// ErrSessionNotFound.
	AddMessage(ctx context.Context, sessionID string, m SessionMessage) error
}

// CheckpointStore keeps suspended runs until a human answers.
type CheckpointStore interface {
	// SaveCheckpoint inserts or replaces a checkpoint.
	SaveCheckpoint(ctx context.Context, cp CheckpointRecord) error
	GetCheckpoint(ctx context.Context, id string) (CheckpointRecord, error)
	// DeleteCheckpoint atomically removes and returns a checkpoint: of
	// concurrent calls for one id exactly one gets the record, the others
	// ErrCheckpointNotFound. Resume deletes a checkpoint only once its
	// continuation is durably recorded.
	DeleteCheckpoint(ctx context.Context, id string) (CheckpointRecord, error)
	// ClaimCheckpoint atomically claims a checkpoint for claimant until the
	// given time (Unix ms) and returns it, when it is unclaimed or its claim
	// lapsed before now: of concurrent claims exactly one wins, the others
	// get ErrCheckpointClaimed; a missing checkpoint is
	// ErrCheckpointNotFound. A claimant that dies stops renewing (see
	// RenewCheckpointClaims), its claim lapses, and the checkpoint can be
	// resumed again.
	ClaimCheckpoint(ctx context.Context, id, claimant string, now, until int64) (CheckpointRecord, error)
	// RenewCheckpointClaims extends every claim held by claimant to until
	// and returns how many it extended.
	RenewCheckpointClaims(ctx context.Context, claimant string, until int64) (int, error)
	// SettleJoin records one slot's output of a join, the point where a
	// composition waits for several suspended children (a parallel step's
	// branches, a supervisor's delegations), creating the join with slots
	// slots on first use. complete is true for exactly one caller: the one
	// whose call settled the last unsettled slot; outputs then holds every
	// slot's output by index. Settling a slot again keeps its first
	// output; it is complete again only for the slot that completed the
	// join, so the completer's retry (a process that died before carrying
	// the composition on; its checkpoint claim makes the retry exclusive)
	// gets the outputs once more, and every other slot never does. It is
	// how "the last child continues the composition" is decided once,
	// whatever runs concurrently; a slot out of range is VALIDATION_ERROR.
	SettleJoin(ctx context.Context, joinID string, slots, slot int, output json.RawMessage) (outputs []json.RawMessage, complete bool, err error)
	// ListCheckpoints returns every checkpoint, oldest first.
	ListCheckpoints(ctx context.Context) ([]CheckpointRecord, error)
	// SuspendRun appends a suspending run's messages and saves its
	// checkpoints as one atomic unit, so a crash can never leave a tool
	// call with no checkpoint to resume it. A turn that calls several
	// human tools saves one checkpoint per call, all or none; with no
	// checkpoint it appends the messages atomically.
	SuspendRun(ctx context.Context, sessionID string, msgs []SessionMessage, cps ...CheckpointRecord) error
}

// LoopStore is the optional record of agent-driven loops and their
// iterations. An agent with a Loop needs it.
type LoopStore interface {
	CreateLoop(ctx context.Context, l LoopRecord) error
	// UpdateLoop changes the non-zero fields of u. A missing loop is
	// ErrLoopNotFound.
	UpdateLoop(ctx context.Context, id string, u LoopUpdate) error
	AddLoopIteration(ctx context.Context, it LoopIteration) error
	GetLoop(ctx context.Context, id string) (LoopDetail, error)
	// ListLoops returns loops matching every non-zero filter field, oldest
	// first.
	ListLoops(ctx context.Context, filter LoopFilter) ([]LoopRecord, error)
}

// CrumbLog is the optional durable per-run crumb history written by the
// choke point. It powers catch-up (Last-Event-ID) on the passive run stream
// and seeds a resumed run's seq. Entries go with their session.
type CrumbLog interface {
	// AppendCrumbs stores entries in order. Entries of one run arrive with
	// increasing Seq.
	AppendCrumbs(ctx context.Context, entries []CrumbLogEntry) error
	// GetCrumbs returns a run's entries with Seq > afterSeq in seq order, at
	// most limit of them (limit <= 0: all).
	GetCrumbs(ctx context.Context, runID string, afterSeq int64, limit int) ([]CrumbLogEntry, error)
	// MaxCrumbSeq returns the highest Seq logged for a run, 0 for none.
	MaxCrumbSeq(ctx context.Context, runID string) (int64, error)
}

// InlineCrumbLog is implemented by a CrumbLog that may report its
// AppendCrumbs works at memory speed and never waits on I/O, as an
// in-process log does. The engine then appends a stream's entries on the
// stream's own goroutine as they are numbered, instead of handing them to a
// writer goroutine so the stream does not wait on the store: for such a log
// the hand-off costs more than the write. AppendCrumbs must not keep the
// entries slice.
type InlineCrumbLog interface {
	CrumbLog
	// AppendsInline reports whether the log writes at memory speed. A type
	// that embeds such a log and adds I/O to its writes must report false.
	AppendsInline() bool
}

// TaskRunStore is the optional audit of one-shot task runs.
type TaskRunStore interface {
	CreateTaskRun(ctx context.Context, r TaskRunRecord) error
	// FinishTaskRun changes the non-zero fields of u. A missing run is
	// ErrTaskRunNotFound.
	FinishTaskRun(ctx context.Context, id string, u TaskRunUpdate) error
	GetTaskRun(ctx context.Context, id string) (TaskRunRecord, error)
	// ListTaskRuns returns runs matching every non-zero filter field, newest
	// first, at most filter.Limit (<= 0: all).
	ListTaskRuns(ctx context.Context, filter TaskRunFilter) ([]TaskRunRecord, error)
}

// KnowledgeStore is the optional knowledge graph behind the core_kg_* tools.
type KnowledgeStore interface {
	AddKnowledgeNode(ctx context.Context, n NewKnowledgeNode) (KnowledgeNode, error)
	AddKnowledgeEdge(ctx context.Context, e KnowledgeEdge) error
	// QueryKnowledge finds an agent's nodes matching q.Query, newest first,
	// at most q.Limit (<= 0: 10).
	QueryKnowledge(ctx context.Context, q KnowledgeQuery) ([]KnowledgeNode, error)
	// ForgetKnowledge removes a node and its edges and reports whether it
	// existed.
	ForgetKnowledge(ctx context.Context, id string) (bool, error)
	// KnowledgeContext returns a session's most recent nodes for an agent,
	// newest first, at most limit (<= 0: 100), for the prompt.
	KnowledgeContext(ctx context.Context, agentID, sessionID string, limit int) ([]KnowledgeNode, error)
}

// DocumentStore is the optional document library behind the core_doc_* tools.
type DocumentStore interface {
	IngestDocument(ctx context.Context, d NewDocument) (DocumentRecord, error)
	// SearchDocuments finds an agent's documents whose title or content
	// matches q.Query, at most q.Limit (<= 0: 5).
	SearchDocuments(ctx context.Context, q DocumentQuery) ([]DocumentRecord, error)
	// ReadDocument returns one of an agent's documents; another agent's id
	// is ErrDocumentNotFound.
	ReadDocument(ctx context.Context, agentID, id string) (Document, error)
}

// Migrator is implemented by stores that create their schema. Instance.Start
// calls Migrate once.
type Migrator interface {
	Migrate(ctx context.Context) error
}

// Session is one conversation.
type Session struct {
	ID        string            `json:"id"`
	CreatedAt int64             `json:"createdAt"`
	UpdatedAt int64             `json:"updatedAt"`
	Tags      map[string]string `json:"tags"`
	AgentID   string            `json:"agentId,omitempty"`
	// Owner is the owner key (OwnerKey) of the identity that created the
	// session, "" for one created without an identity (no auth, a
	// schedule, or before sessions recorded it). It never changes; with
	// Storage.OwnSessions on, only that identity and admins see the
	// session.
	Owner string `json:"owner,omitempty"`
}

// NewSession is the input of CreateSession.
type NewSession struct {
	ID      string
	Tags    map[string]string
	AgentID string
	// Owner is stored as the session's Owner. Storage.CreateSession sets
	// it, when empty, from the caller's identity (IdentityFrom).
	Owner string
}

// SessionFilter narrows ListSessions.
type SessionFilter struct {
	Tags map[string]string
	// Owner, when set, keeps the sessions whose Owner is exactly it.
	Owner string
}

// CleanupOptions selects the sessions CleanupSessions deletes.
type CleanupOptions struct {
	OlderThan time.Duration
	Tags      map[string]string
	// Owner, when set, deletes only sessions whose Owner is exactly it.
	Owner string
}

// MessageRole is who a session message came from.
type MessageRole string

// The message roles.
const (
	RoleUser      MessageRole = "user"
	RoleAssistant MessageRole = "assistant"
	RoleTool      MessageRole = "tool"
	RoleSystem    MessageRole = "system"
)

// SessionMessage is one persisted turn. Content is the runner's
// provider-neutral message form as JSON; stores keep it byte for byte.
type SessionMessage struct {
	ID        string          `json:"id"`
	SessionID string          `json:"sessionId"`
	Role      MessageRole     `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp int64           `json:"timestamp"`
}

// CheckpointRecord is a suspended run waiting for a human.
type CheckpointRecord struct {
	ID        string `json:"id"`
	AgentID   string `json:"agentId"`
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	ToolName  string `json:"toolName"`
	// ToolCallID is the model's call id of the pending tool; resume answers it.
	ToolCallID string          `json:"toolCallId"`
	Schema     json.RawMessage `json:"schema"`
	Prompt     string          `json:"prompt,omitempty"`
	Kind       HumanKind       `json:"kind,omitempty"`
	// Skill is the skill active on the run that suspended, restored on resume.
	Skill string `json:"skill,omitempty"`
	// Parent links a run suspended inside a pipeline or a delegation to the
	// rest of its composition.
	Parent *CheckpointParent `json:"parent,omitempty"`
	// Pending lists, on a supervisor suspended by its delegations, the child
	// runs it waits for. Such a checkpoint is resumed through its children.
	Pending []PendingDelegation `json:"pending,omitempty"`
	// Set links the checkpoints of one turn that called several human
	// tools: each is answered on its own, and the run continues once the
	// last of them is answered. Nil for a turn with one human call.
	Set       *HumanSet `json:"set,omitempty"`
	CreatedAt int64     `json:"createdAt"`
	// Meta holds what plugins attached to the suspension (a trace
	// context, say; see CheckpointAnnotator), handed back to the resumed
	// run's context wherever it resumes (CheckpointMetaFrom).
	Meta map[string]string `json:"meta,omitempty"`
	// ClaimedBy and ClaimedUntil are set while a resume holds the
	// checkpoint (see ClaimCheckpoint). SaveCheckpoint stores what it is
	// given, so saving a record without them releases a claim.
	ClaimedBy    string `json:"claimedBy,omitempty"`
	ClaimedUntil int64  `json:"claimedUntil,omitempty"`
}

// ParentKind says which composition a checkpoint belongs to.
type ParentKind string

// The composition kinds.
const (
	ParentPipeline   ParentKind = "pipeline"
	ParentSupervisor ParentKind = "supervisor"
	// ParentLoop links the last step of a loop iteration's pipeline to the
	// host run waiting on it: the iteration is recorded, and its output
	// answers the host's loop tool call, when the pipeline completes.
	ParentLoop ParentKind = "loop"
)

// CheckpointParent is the continuation of a composition around a suspended
// run. It is self-contained: the remaining steps are stored, never looked up
// again, because loops run pipelines that exist in no config.
type CheckpointParent struct {
	Kind ParentKind `json:"kind"`

	// Pipeline continuation. PipelineRunID prefixes the run ids of the
	// pipeline's steps, so the continuation numbers them like the original.
	PipelineID     string            `json:"pipelineId,omitempty"`
	PipelineRunID  string            `json:"pipelineRunId,omitempty"`
	StepIndex      int               `json:"stepIndex,omitempty"`
	StepAgentID    string            `json:"stepAgentId,omitempty"`
	RemainingSteps []PipelineStep    `json:"remainingSteps,omitempty"`
	Map            *MapProgress      `json:"map,omitempty"`
	Parallel       *ParallelProgress `json:"parallel,omitempty"`
	// Outer is the continuation of the enclosing level, when this pipeline
	// is itself a branch of a parallel step: once this level completes, its
	// output continues Outer.
	Outer *CheckpointParent `json:"outer,omitempty"`

	// Supervisor and loop continuation: the checkpoint of the run awaiting
	// this child, and the tool call (core_delegate, core_start_loop,
	// core_iterate_loop) the child's output answers.
	CheckpointID string `json:"checkpointId,omitempty"`
	ToolCallID   string `json:"toolCallId,omitempty"`
	// Loop is the iteration a loop continuation records.
	Loop *LoopProgress `json:"loop,omitempty"`
}

// LoopProgress is a loop iteration whose pipeline suspended for a human.
type LoopProgress struct {
	LoopID    string          `json:"loopId"`
	Iteration int             `json:"iteration"`
	Input     json.RawMessage `json:"input,omitempty"`
	StartedAt int64           `json:"startedAt"`
}

// MapProgress is a suspended map step's fan-out state.
type MapProgress struct {
	AgentID        string            `json:"agentId"`
	SettledOutputs []json.RawMessage `json:"settledOutputs"`
	RemainingItems []json.RawMessage `json:"remainingItems"`
}

// ParallelProgress places a run inside a parallel step's branch. The step
// continues when its last branch settles: each branch, when it completes,
// settles its slot of the join JoinID (CheckpointStore.SettleJoin), and the
// one whose settlement completes the join carries the merged output on.
type ParallelProgress struct {
	BranchIndex int    `json:"branchIndex"`
	Branches    int    `json:"branches"`
	JoinID      string `json:"joinId"`
}

// HumanSet is the group of checkpoints one model turn left, one per human
// call. ID names the join (CheckpointStore.SettleJoin) whose slots are the
// set's checkpoints in call order: the answer that settles the last slot
// continues the run.
type HumanSet struct {
	ID            string   `json:"id"`
	CheckpointIDs []string `json:"checkpointIds"`
}

// Slot is the index of checkpoint id in the set, -1 when it is not one of
// its members.
func (s *HumanSet) Slot(id string) int {
	for i, c := range s.CheckpointIDs {
		if c == id {
			return i
		}
	}
	return -1
}

// PendingDelegation is one suspended child of a supervisor.
type PendingDelegation struct {
	ToolCallID string `json:"toolCallId"`
	// ToolName is the call's tool, core_delegate when empty (a loop
	// iteration waits under core_start_loop or core_iterate_loop).
	ToolName          string `json:"toolName,omitempty"`
	ChildCheckpointID string `json:"childCheckpointId"`
	SubAgentID        string `json:"subAgentId"`
}

// LoopStatus is the state of an agent-driven loop.
type LoopStatus string

// The loop statuses.
const (
	LoopRunning   LoopStatus = "running"
	LoopCompleted LoopStatus = "completed"
	LoopExhausted LoopStatus = "exhausted"
	LoopFailed    LoopStatus = "failed"
)

// LoopRecord is one agent-driven loop.
type LoopRecord struct {
	ID            string          `json:"id"`
	AgentID       string          `json:"agentId"`
	SessionID     string          `json:"sessionId"`
	RunID         string          `json:"runId"`
	Pool          []string        `json:"pool"`
	Pipeline      []string        `json:"pipeline"`
	MaxIterations int             `json:"maxIterations"`
	Status        LoopStatus      `json:"status"`
	Iterations    int             `json:"iterations"`
	Result        json.RawMessage `json:"result,omitempty"`
	StartedAt     int64           `json:"startedAt"`
	CompletedAt   int64           `json:"completedAt,omitempty"`
}

// LoopUpdate patches a loop; zero fields are left unchanged.
type LoopUpdate struct {
	Status      LoopStatus
	Iterations  int
	Result      json.RawMessage
	CompletedAt int64
}

// LoopIteration is one execution of a loop's pipeline.
type LoopIteration struct {
	ID          string          `json:"id"`
	LoopID      string          `json:"loopId"`
	Index       int             `json:"index"` // 1-based
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output"`
	StartedAt   int64           `json:"startedAt"`
	CompletedAt int64           `json:"completedAt"`
}

// LoopDetail is a loop with its iterations in order, the shape of
// GET /loops/{id}.
type LoopDetail struct {
	Loop       LoopRecord      `json:"loop"`
	Iterations []LoopIteration `json:"iterations"`
}

// LoopFilter narrows ListLoops.
type LoopFilter struct {
	SessionID string
	AgentID   string
	Status    LoopStatus
	// Owner, when set, keeps the loops whose session's Owner is exactly it
	// (a loop of a session without an owner, or of one that is gone, does
	// not match). Storage sets it under the session ownership rule.
	Owner string
}

// TaskRunStatus is the state of a one-shot task run.
type TaskRunStatus string

// The task run statuses.
const (
	TaskRunning   TaskRunStatus = "running"
	TaskCompleted TaskRunStatus = "completed"
	TaskFailed    TaskRunStatus = "failed"
)

// TaskRunRecord audits one task run. AgentID, SessionID and RunID are empty
// for a standalone run.
type TaskRunRecord struct {
	ID          string          `json:"id"`
	TaskID      string          `json:"taskId"`
	AgentID     string          `json:"agentId,omitempty"`
	SessionID   string          `json:"sessionId,omitempty"`
	RunID       string          `json:"runId,omitempty"`
	Model       TaskModelInfo   `json:"model"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output,omitempty"`
	Status      TaskRunStatus   `json:"status"`
	Usage       *Usage          `json:"usage,omitempty"`
	Error       string          `json:"error,omitempty"`
	DurationMs  int64           `json:"durationMs,omitempty"`
	CreatedAt   int64           `json:"createdAt"`
	CompletedAt int64           `json:"completedAt,omitempty"`
}

// TaskRunUpdate patches a task run; zero fields are left unchanged.
type TaskRunUpdate struct {
	Status      TaskRunStatus
	Output      json.RawMessage
	Usage       *Usage
	Error       string
	DurationMs  int64
	CompletedAt int64
}

// TaskRunFilter narrows ListTaskRuns.
type TaskRunFilter struct {
	TaskID    string
	AgentID   string
	SessionID string
	Status    TaskRunStatus
	Limit     int
	// Owner, when set, keeps the task runs whose session's Owner is
	// exactly it (a standalone task run has no session and does not
	// match), before Limit applies. Storage sets it under the session
	// ownership rule.
	Owner string
}

// CrumbLogEntry is one durable crumb-log row. Aggregated text:delta and
// reasoning:delta entries carry the joined delta. SessionID anchors the
// cascade; an entry may have none.
type CrumbLogEntry struct {
	RunID     string `json:"runId"`
	Seq       int64  `json:"seq"`
	SessionID string `json:"sessionId,omitempty"`
	AgentID   string `json:"agentId,omitempty"`
	Type      string `json:"type"`
	Crumb     Crumb  `json:"crumb"`
	CreatedAt int64  `json:"createdAt"`
}

// KnowledgeNode is one fact or entity of the knowledge graph.
type KnowledgeNode struct {
	ID    string         `json:"id"`
	Label string         `json:"label"`
	Data  map[string]any `json:"data"`
}

// NewKnowledgeNode is the input of AddKnowledgeNode.
type NewKnowledgeNode struct {
	AgentID   string
	SessionID string
	Label     string
	Data      map[string]any
}

// KnowledgeEdge relates two nodes.
type KnowledgeEdge struct {
	FromID   string `json:"fromId"`
	ToID     string `json:"toId"`
	Relation string `json:"relation"`
}

// KnowledgeQuery is the input of QueryKnowledge.
type KnowledgeQuery struct {
	AgentID string
	Query   string
	Limit   int
}

// DocumentRecord identifies a stored document.
type DocumentRecord struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Source string `json:"source,omitempty"`
}

// Document is a stored document's text.
type Document struct {
	Title   string `json:"title"`
	Content string `json:"content"`
}

// NewDocument is the input of IngestDocument.
type NewDocument struct {
	AgentID string
	Title   string
	Content string
	Source  string
}

// DocumentQuery is the input of SearchDocuments.
type DocumentQuery struct {
	AgentID string
	Query   string
	Limit   int
}

// NowMillis returns the current time in Unix milliseconds, the unit of every
// timestamp bread stores.
func NowMillis() int64 { return time.Now().UnixMilli() }

// Pinger is an optional capability of a store (and of a bus): Ping reports
// whether it answers now, within ctx. A server's readiness probe calls it;
// a store without it is taken to be ready while it is open.
type Pinger interface {
	Ping(ctx context.Context) error
}
