package memory

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// Store is an in-memory core.BreadStore with every optional capability. The
// zero value is not usable; call New.
type Store struct {
	mu     sync.RWMutex
	closed bool
	now    func() time.Time // Options.Now, or time.Now
	// seq numbers insertions, so records with equal timestamps keep a stable
	// order (oldest first, newest first) whatever the clock did.
	seq uint64

	sessions    map[string]*session
	checkpoints map[string]*storedCheckpoint
	loops       map[string]*storedLoop
	taskRuns    map[string]*storedTaskRun
	runRecords  map[string]*core.RunRecord // run lifecycles (core.RunStore)
	// sessionRecords indexes the run records by session, so the listings
	// of one session's runs (the busy gate's, at every run's start) do not
	// scan every run the store keeps.
	sessionRecords map[string]runIndex[*core.RunRecord]
	joins          map[string]*join // composition settlements
	runs           map[string]*crumbRun
	// sessionRuns indexes, per session, the runs holding entries anchored to
	// it, so deleting a session touches only its own runs.
	sessionRuns map[string]runIndex[struct{}]
	nodes       map[string]*storedNode
	edges       []core.KnowledgeEdge
	documents   map[string]*storedDocument
	evalRuns    map[string]*storedEvalRun
	// subs are the run subscriptions (core.RunSubscriptionStore) by run,
	// in the order they were first put.
	subs map[string][]core.RunSubscription

	// retain bounds the finished runs kept (Options.RetainRuns);
	// finishedOrder lists them oldest first (a run whose record has ended
	// is in it).
	retain        int
	finishedOrder []string

	// retainSessions bounds the sessions kept (Options.RetainSessions);
	// order lists them least recently updated first.
	retainSessions int
	order          sessionOrder
}

var (
	_ core.BreadStore     = (*Store)(nil)
	_ core.CrumbLog       = (*Store)(nil)
	_ core.TaskRunStore   = (*Store)(nil)
	_ core.RunStore       = (*Store)(nil)
	_ core.LoopStore      = (*Store)(nil)
	_ core.KnowledgeStore = (*Store)(nil)
	_ core.DocumentStore  = (*Store)(nil)
	_ core.EvalRunStore   = (*Store)(nil)
	_ io.Closer           = (*Store)(nil)
)

// New returns an empty Store.
func New() *Store { return NewWithOptions(Options{}) }

// NewWithOptions returns an empty store configured by o.
func NewWithOptions(o Options) *Store {
	retain := o.RetainRuns
	if retain == 0 {
		retain = DefaultRetainRuns
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	retainSessions := o.RetainSessions
	if retainSessions == 0 {
		retainSessions = DefaultRetainSessions
	}
	return &Store{
		now:            now,
		retain:         retain,
		retainSessions: retainSessions,
		sessionRecords: make(map[string]runIndex[*core.RunRecord]),
		sessions:       make(map[string]*session),
		checkpoints:    make(map[string]*storedCheckpoint),
		loops:          make(map[string]*storedLoop),
		taskRuns:       make(map[string]*storedTaskRun),
		runRecords:     make(map[string]*core.RunRecord),
		joins:          make(map[string]*join),
		runs:           make(map[string]*crumbRun),
		sessionRuns:    make(map[string]runIndex[struct{}]),
		nodes:          make(map[string]*storedNode),
		documents:      make(map[string]*storedDocument),
		evalRuns:       make(map[string]*storedEvalRun),
	}
}

// nowMillis is the store's time in Unix milliseconds.
func (s *Store) nowMillis() int64 { return s.now().UnixMilli() }

// Close drops every record. Later calls return a STORE_CLOSED error; closing
// twice is not an error.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.sessions, s.checkpoints, s.loops, s.taskRuns, s.runRecords, s.joins = nil, nil, nil, nil, nil, nil
	s.sessionRecords, s.order = nil, sessionOrder{}
	s.runs, s.sessionRuns, s.nodes, s.edges, s.documents, s.evalRuns = nil, nil, nil, nil, nil, nil
	return nil
}

// lock takes the write lock for a call, after checking its context. On
// success the caller must s.mu.Unlock.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed()
	}
	return nil
}

// rlock takes the read lock for a call, after checking its context. On
// success the caller must s.mu.RUnlock.
func (s *Store) rlock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return errClosed()
	}
	return nil
}

// next returns the next insertion number. The write lock must be held.
func (s *Store) next() uint64 {
	s.seq++
	return s.seq
}

// newID returns a UUIDv7: unique and sortable by creation time.
func (s *Store) newID() string { return core.NewUUIDv7() }

func errClosed() error {
	return &core.BreadError{Code: core.CodeStoreClosed, Message: "memory store: the store is closed"}
}

func invalid(format string, args ...any) error {
	return &core.BreadError{Code: core.CodeValidationError, Message: "memory store: " + fmt.Sprintf(format, args...)}
}

func notFound(sentinel *core.BreadError, format string, args ...any) error {
	return &core.BreadError{Code: sentinel.Code, Message: fmt.Sprintf(format, args...)}
}

var _ core.Pinger = (*Store)(nil)

// Ping reports STORE_CLOSED once the store is closed; an open memory store
// always answers.
func (s *Store) Ping(context.Context) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed()
	}
	return nil
}
