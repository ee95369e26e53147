package core

import (
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// Storage is the store as everything above the ports uses it, as *sql.DB is
// a database driver's: the engine, the server, the streaming routes, the
// protocols and the CLI call a Storage, never a BreadStore or one of its
// optional parts directly. NewStorage checks every optional capability of
// the store once; each method then calls the store, or, for a capability
// the store lacks, does what its comment says (most answer an error
// matching ErrNotImplemented; Has tells in advance). After Close every
// method fails with an error matching ErrStoreClosed.
//
// A wrapper around a store (metrics, tracing, a test's call counter) keeps
// every capability of the store it wraps by implementing As (see As): it
// implements only the methods it instruments.
//
// Every method of a session carries the caller's context, so an entry
// point's identity (IdentityFrom) reaches the store's session calls: the
// ownership rule for sessions (OwnSessions) is in Storage's session
// methods, where every entry point meets it.
//
// A Storage is safe for concurrent use. Close does not wait for calls in
// flight: they finish against the store, which may fail them itself.
type Storage struct {
	store BreadStore
	caps  StoreCapability

	runs    RunStore
	lister  RunLister
	counter RunCounter // optional, without a capability bit: CountRuns falls back to listing
	writer  RunWriter  // optional, without a capability bit: WriteRun falls back to one write at a time
	// foldsCrumbs: writer is a RunCrumbWriter whose log is crumbs
	// (WritesRunCrumbs).
	foldsCrumbs bool
	starters    SessionStarters
	deleter     MessageDeleter
	loops       LoopStore
	crumbs      CrumbLog
	tasks       TaskRunStore
	knowledge   KnowledgeStore
	documents   DocumentStore
	evals       EvalRunStore
	starter     Starter
	migrator    Migrator
	pinger      Pinger
	closer      io.Closer
	state       SessionStateStore
	subs        RunSubscriptionStore

	owners atomic.Pointer[SessionOwners] // the session ownership rule (OwnSessions), nil when off

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// StoreCapability names optional parts of a store; a set of them is their
// bitwise or.
type StoreCapability uint32

// The optional capabilities of a store.
const (
	StoreRuns             StoreCapability = 1 << iota // RunStore: durable run records and leases
	StoreRunList                                      // RunLister: runs listed by filter
	StoreSessionStarters                              // SessionStarters: who started a session's runs
	StoreMessageDelete                                // MessageDeleter: messages removed from a session
	StoreLoops                                        // LoopStore: agent-driven loops
	StoreCrumbLog                                     // CrumbLog: each run's crumbs, durably
	StoreInlineCrumbLog                               // InlineCrumbLog reporting AppendsInline
	StoreTaskRuns                                     // TaskRunStore: the task audit
	StoreKnowledge                                    // KnowledgeStore: the knowledge graph
	StoreDocuments                                    // DocumentStore: the document library
	StoreEvalRuns                                     // EvalRunStore: the eval history
	StoreStart                                        // Starter: opens connections at start
	StoreMigrate                                      // Migrator: creates its schema at start
	StorePing                                         // Pinger: answers a readiness probe
	StoreClose                                        // io.Closer: released at stop
	StoreSessionState                                 // SessionStateStore: a session's state document
	StoreRunSubscriptions                             // RunSubscriptionStore: who asked to hear about a run
	storeCapabilityEnd
)

var storeCapabilityNames = [...]string{
	"RunStore", "RunLister", "SessionStarters", "MessageDeleter", "LoopStore",
	"CrumbLog", "InlineCrumbLog", "TaskRunStore", "KnowledgeStore", "DocumentStore", "EvalRunStore",
	"Starter", "Migrator", "Pinger", "io.Closer", "SessionStateStore", "RunSubscriptionStore",
}

// StoreCapabilities lists every store capability, one bit each, in order.
func StoreCapabilities() []StoreCapability { return eachBit(storeCapabilityEnd) }

// capabilityString names the bits of c, joined by "|"; "none" for none.
func capabilityString[C ~uint8 | ~uint32](c C, names []string) string {
	var set []string
	for i, name := range names {
		if c&(1<<i) != 0 {
			set = append(set, name)
		}
	}
	if len(set) == 0 {
		return "none"
	}
	return strings.Join(set, "|")
}

// eachBit lists the bits below end, lowest first.
func eachBit[C ~uint8 | ~uint32](end C) []C {
	var out []C
	for c := C(1); c < end; c <<= 1 {
		out = append(out, c)
	}
	return out
}

// String names the capabilities of c by their interfaces, joined by "|"
// ("RunStore|CrumbLog"); "none" for none.
func (c StoreCapability) String() string {
	return capabilityString(c, storeCapabilityNames[:])
}

// NewStorage returns the Storage over store, with each optional capability
// found once, by type assertion or through the store's As method. A store
// that is already a *Storage is returned as it is, so a Storage built once
// (by the CLI, say) is shared by everything handed it. A nil store is a nil
// Storage.
func NewStorage(store BreadStore) *Storage {
	if store == nil {
		return nil
	}
	if s, ok := store.(*Storage); ok {
		return s
	}
	s := &Storage{store: store}
	s.runs = found[RunStore](&s.caps, StoreRuns, store)
	s.lister = found[RunLister](&s.caps, StoreRunList, store)
	if s.lister != nil {
		s.counter, _ = capabilityOf[RunCounter](store)
	}
	s.writer, _ = capabilityOf[RunWriter](store)
	s.starters = found[SessionStarters](&s.caps, StoreSessionStarters, store)
	s.deleter = found[MessageDeleter](&s.caps, StoreMessageDelete, store)
	s.loops = found[LoopStore](&s.caps, StoreLoops, store)
	s.crumbs = found[CrumbLog](&s.caps, StoreCrumbLog, store)
	if s.crumbs != nil {
		// Inline is a property of the log the calls reach, the one found,
		// never of one it wraps: a wrapper may add I/O to the writes.
		if il, ok := s.crumbs.(InlineCrumbLog); ok && il.AppendsInline() {
			s.caps |= StoreInlineCrumbLog
		}
	}
	if cw, ok := capabilityOf[RunCrumbWriter](store); ok && s.crumbs != nil && any(s.writer) == any(cw) {
		s.foldsCrumbs = any(cw.RunCrumbLog()) == any(s.crumbs)
	}
	s.tasks = found[TaskRunStore](&s.caps, StoreTaskRuns, store)
	s.knowledge = found[KnowledgeStore](&s.caps, StoreKnowledge, store)
	s.documents = found[DocumentStore](&s.caps, StoreDocuments, store)
	s.evals = found[EvalRunStore](&s.caps, StoreEvalRuns, store)
	s.starter = found[Starter](&s.caps, StoreStart, store)
	s.migrator = found[Migrator](&s.caps, StoreMigrate, store)
	s.pinger = found[Pinger](&s.caps, StorePing, store)
	s.closer = found[io.Closer](&s.caps, StoreClose, store)
	s.state = found[SessionStateStore](&s.caps, StoreSessionState, store)
	s.subs = found[RunSubscriptionStore](&s.caps, StoreRunSubscriptions, store)
	return s
}

// found returns v's capability T and records c in caps when v has it.
func found[T any, C ~uint8 | ~uint32](caps *C, c C, v any) T {
	t, ok := capabilityOf[T](v)
	if ok {
		*caps |= c
	}
	return t
}

// Has reports whether the store has every capability in c.
func (s *Storage) Has(c StoreCapability) bool { return s.caps&c == c }

// Capabilities returns the set of capabilities the store has.
func (s *Storage) Capabilities() StoreCapability { return s.caps }

// As finds in the store what target points to (see As): an adapter's own
// type, to reach what only it offers.
func (s *Storage) As(target any) bool { return As(s.store, target) }

// Start starts a store that opens connections (Starter); without one it
// does nothing. The engine calls it once, when it starts, before Migrate.
func (s *Storage) Start(ctx context.Context) error {
	if err := s.open(); err != nil {
		return err
	}
	if s.starter == nil {
		return nil
	}
	return s.starter.Start(ctx)
}

// Migrate creates or upgrades the store's schema (Migrator); without one it
// does nothing. The engine calls it once, when it starts.
func (s *Storage) Migrate(ctx context.Context) error {
	if err := s.open(); err != nil {
		return err
	}
	if s.migrator == nil {
		return nil
	}
	return s.migrator.Migrate(ctx)
}

// Ping reports whether the store answers now (Pinger); a store without
// Ping is taken to answer while the Storage is open.
func (s *Storage) Ping(ctx context.Context) error {
	if err := s.open(); err != nil {
		return err
	}
	if s.pinger == nil {
		return nil
	}
	return s.pinger.Ping(ctx)
}

// Close refuses every later call with ErrStoreClosed and closes the store
// (io.Closer; a store without Close has nothing to release). Closing again
// returns what the first Close returned.
func (s *Storage) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if s.closer != nil {
			s.closeErr = s.closer.Close()
		}
	})
	return s.closeErr
}

// open is nil while the Storage is open, ErrStoreClosed's code after
// Close.
func (s *Storage) open() error {
	if s.closed.Load() {
		return errStorageClosed
	}
	return nil
}

// can is open's check plus the capability c: a store without it answers
// NOT_IMPLEMENTED.
func (s *Storage) can(c StoreCapability) error {
	if s.closed.Load() {
		return errStorageClosed
	}
	if s.caps&c == 0 {
		return &BreadError{Code: CodeNotImplemented, Message: "the store does not implement core." + c.String(),
			Context: map[string]any{"capability": c.String()}}
	}
	return nil
}

var errStorageClosed = &BreadError{Code: CodeStoreClosed, Message: "the store is closed"}
