package core_test

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
)

// bareStore is a BreadStore with no optional part: the memory store's
// sessions and checkpoints, nothing else.
type bareStore struct {
	core.SessionStore
	core.CheckpointStore
}

func newBare() bareStore {
	m := memory.New()
	return bareStore{m, m}
}

// countingStore counts the BreadStore calls made through it and keeps every
// capability of the store it wraps by implementing As only.
type countingStore struct {
	core.BreadStore
	calls atomic.Int64
}

func (c *countingStore) GetSession(ctx context.Context, id string) (core.Session, error) {
	c.calls.Add(1)
	return c.BreadStore.GetSession(ctx, id)
}

func (c *countingStore) As(target any) bool { return core.As(c.BreadStore, target) }

// timedLog instruments the crumb log of the store it wraps, and only that:
// As hands out itself for a CrumbLog, the wrapped store for the rest.
type timedLog struct {
	core.BreadStore
	log     core.CrumbLog
	appends atomic.Int64
}

func (t *timedLog) AppendCrumbs(ctx context.Context, e []core.CrumbLogEntry) error {
	t.appends.Add(1)
	return t.log.AppendCrumbs(ctx, e)
}

func (t *timedLog) GetCrumbs(ctx context.Context, runID string, after int64, limit int) ([]core.CrumbLogEntry, error) {
	return t.log.GetCrumbs(ctx, runID, after, limit)
}

func (t *timedLog) MaxCrumbSeq(ctx context.Context, runID string) (int64, error) {
	return t.log.MaxCrumbSeq(ctx, runID)
}

func (t *timedLog) As(target any) bool { return core.As(t.BreadStore, target) }

// optionalCalls are the Storage methods that need an optional capability,
// with the capability.
var optionalCalls = map[string]core.StoreCapability{
	"PutRun": core.StoreRuns, "EndRun": core.StoreRuns, "GetRun": core.StoreRuns, "RenewRunLeases": core.StoreRuns, "ExpiredRuns": core.StoreRuns, "LoseRun": core.StoreRuns,
	"ListRuns": core.StoreRunList, "CountRuns": core.StoreRunList, "SessionStarters": core.StoreSessionStarters, "DeleteMessages": core.StoreMessageDelete,
	"CreateLoop": core.StoreLoops, "UpdateLoop": core.StoreLoops, "AddLoopIteration": core.StoreLoops, "GetLoop": core.StoreLoops, "ListLoops": core.StoreLoops,
	"GetSessionState": core.StoreSessionState, "PutSessionState": core.StoreSessionState,
	"PutRunSubscription": core.StoreRunSubscriptions, "ListRunSubscriptions": core.StoreRunSubscriptions,
	"DeleteRunSubscription": core.StoreRunSubscriptions, "DeleteRunSubscriptions": core.StoreRunSubscriptions,
	"AppendCrumbs": core.StoreCrumbLog, "GetCrumbs": core.StoreCrumbLog, "MaxCrumbSeq": core.StoreCrumbLog,
	"CreateTaskRun": core.StoreTaskRuns, "FinishTaskRun": core.StoreTaskRuns, "GetTaskRun": core.StoreTaskRuns, "ListTaskRuns": core.StoreTaskRuns,
	"AddKnowledgeNode": core.StoreKnowledge, "AddKnowledgeEdge": core.StoreKnowledge, "QueryKnowledge": core.StoreKnowledge, "ForgetKnowledge": core.StoreKnowledge, "KnowledgeContext": core.StoreKnowledge,
	"IngestDocument": core.StoreDocuments, "SearchDocuments": core.StoreDocuments, "ReadDocument": core.StoreDocuments,
	"SaveEvalRun": core.StoreEvalRuns, "GetEvalRun": core.StoreEvalRuns, "ListEvalRuns": core.StoreEvalRuns,
}

// noErrorCalls are the Storage methods that return no error, or whose
// fallback for a missing capability is no error.
var noErrorCalls = map[string]bool{
	"Has": true, "Capabilities": true, "As": true, "AppendsInline": true,
	"Start": true, "Migrate": true, "Ping": true,
}

// callAll calls every method of s but Close that returns an error, with
// zero arguments (a live context), and returns each one's error by name.
func callAll(t *testing.T, s *core.Storage) map[string]error {
	t.Helper()
	errType := reflect.TypeFor[error]()
	v := reflect.ValueOf(s)
	out := map[string]error{}
	for i := range v.NumMethod() {
		m := v.Type().Method(i)
		ft := m.Type
		if m.Name == "Close" || ft.NumOut() == 0 || ft.Out(ft.NumOut()-1) != errType {
			continue
		}
		args := make([]reflect.Value, 0, ft.NumIn()-1)
		for j := 1; j < ft.NumIn(); j++ {
			if ft.In(j) == reflect.TypeFor[context.Context]() {
				args = append(args, reflect.ValueOf(t.Context()))
				continue
			}
			args = append(args, reflect.Zero(ft.In(j)))
		}
		var res []reflect.Value
		if ft.IsVariadic() {
			res = v.Method(i).CallSlice(args)
		} else {
			res = v.Method(i).Call(args)
		}
		err, _ := res[len(res)-1].Interface().(error)
		out[m.Name] = err
	}
	return out
}

func TestStorageFindsEveryCapabilityOfTheMemoryStore(t *testing.T) {
	s := core.NewStorage(memory.New())
	want := core.StoreRuns | core.StoreRunList | core.StoreSessionStarters | core.StoreMessageDelete | core.StoreLoops |
		core.StoreCrumbLog | core.StoreInlineCrumbLog | core.StoreTaskRuns | core.StoreKnowledge | core.StoreDocuments | core.StoreEvalRuns |
		core.StorePing | core.StoreClose | core.StoreSessionState | core.StoreRunSubscriptions
	if got := s.Capabilities(); got != want {
		t.Errorf("Capabilities() = %v, want %v", got, want)
	}
	if !s.AppendsInline() {
		t.Error("AppendsInline() = false for the memory store's log")
	}
}

// TestStorageFallbacks: a store with no optional part answers
// NOT_IMPLEMENTED for every optional call, and Start, Migrate, Ping and
// Close succeed with nothing to do.
func TestStorageFallbacks(t *testing.T) {
	s := core.NewStorage(newBare())
	if s.Capabilities() != 0 {
		t.Fatalf("Capabilities() = %v, want none", s.Capabilities())
	}
	for name, err := range callAll(t, s) {
		_, optional := optionalCalls[name]
		switch {
		case optional && !errors.Is(err, core.ErrNotImplemented):
			t.Errorf("%s without its capability = %v, want NOT_IMPLEMENTED", name, err)
		case noErrorCalls[name] && err != nil:
			t.Errorf("%s without its capability = %v, want nil", name, err)
		case !optional && !noErrorCalls[name] && errors.Is(err, core.ErrNotImplemented):
			t.Errorf("%s is a BreadStore call but answered NOT_IMPLEMENTED", name)
		}
	}
	if s.AppendsInline() {
		t.Error("AppendsInline() without a crumb log")
	}
}

// TestStorageCallsNeedTheirCapability keeps optionalCalls honest: every
// optional call of a store with all capabilities but one answers
// NOT_IMPLEMENTED exactly when the call needs the missing one.
func TestStorageCallsNeedTheirCapability(t *testing.T) {
	for _, c := range core.StoreCapabilities() {
		var needed []string
		for name, need := range optionalCalls {
			if need == c {
				needed = append(needed, name)
			}
		}
		if len(needed) == 0 {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			s := core.NewStorage(&hiding{BreadStore: memory.New(), hide: c})
			if s.Has(c) {
				t.Fatalf("the store hides %v but Has reports it", c)
			}
			for name, err := range callAll(t, s) {
				if got, want := errors.Is(err, core.ErrNotImplemented), optionalCalls[name] == c; got != want {
					t.Errorf("%s: NOT_IMPLEMENTED = %v, want %v (err %v)", name, got, want, err)
				}
			}
		})
	}
}

// hiding keeps every capability of the store it wraps but one.
type hiding struct {
	core.BreadStore
	hide core.StoreCapability
}

func (h *hiding) As(target any) bool {
	probe := core.NewStorage(h.BreadStore)
	for _, c := range core.StoreCapabilities() {
		if c == h.hide && probe.Has(c) && hidden(target, c) {
			return false
		}
	}
	return core.As(h.BreadStore, target)
}

// hidden reports whether target asks for capability c.
func hidden(target any, c core.StoreCapability) bool {
	switch target.(type) {
	case *core.RunStore:
		return c == core.StoreRuns
	case *core.RunLister:
		return c == core.StoreRunList
	case *core.SessionStarters:
		return c == core.StoreSessionStarters
	case *core.MessageDeleter:
		return c == core.StoreMessageDelete
	case *core.LoopStore:
		return c == core.StoreLoops
	case *core.CrumbLog:
		return c == core.StoreCrumbLog
	case *core.TaskRunStore:
		return c == core.StoreTaskRuns
	case *core.KnowledgeStore:
		return c == core.StoreKnowledge
	case *core.DocumentStore:
		return c == core.StoreDocuments
	case *core.EvalRunStore:
		return c == core.StoreEvalRuns
	case *core.SessionStateStore:
		return c == core.StoreSessionState
	case *core.RunSubscriptionStore:
		return c == core.StoreRunSubscriptions
	}
	return false
}

func TestStorageClosedRefusesEveryCall(t *testing.T) {
	m := memory.New()
	s := core.NewStorage(m)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close = %v, want the first one's nil", err)
	}
	for name, err := range callAll(t, s) {
		if !errors.Is(err, core.ErrStoreClosed) {
			t.Errorf("%s after Close = %v, want STORE_CLOSED", name, err)
		}
	}
	// The store itself was closed too.
	if _, err := m.CreateSession(t.Context(), core.NewSession{}); !errors.Is(err, core.ErrStoreClosed) {
		t.Errorf("the wrapped store after Close = %v, want STORE_CLOSED", err)
	}
}

// TestStorageThroughAWrapper: a wrapper that implements As and the one
// method it counts keeps every capability of the store it wraps, and calls
// reach that store.
func TestStorageThroughAWrapper(t *testing.T) {
	m := memory.New()
	w := &countingStore{BreadStore: m}
	s := core.NewStorage(w)
	if got, want := s.Capabilities(), core.NewStorage(memory.New()).Capabilities(); got != want {
		t.Fatalf("through the wrapper Capabilities() = %v, want the store's %v", got, want)
	}
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, core.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutRun(ctx, core.RunRecord{ID: "r1", AgentID: "a", SessionID: sess.ID, Status: core.RunRunning}); err != nil {
		t.Fatal(err)
	}
	if rec, err := m.GetRun(ctx, "r1"); err != nil || rec.AgentID != "a" {
		t.Errorf("the run put through the wrapper: %+v, %v", rec, err)
	}
	if _, err := s.GetSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if w.calls.Load() != 1 {
		t.Errorf("the wrapper counted %d GetSession calls, want 1", w.calls.Load())
	}
	var inner *memory.Store
	if !s.As(&inner) || inner != m {
		t.Error("Storage.As did not reach the memory store through the wrapper")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetSession(ctx, sess.ID); !errors.Is(err, core.ErrStoreClosed) {
		t.Errorf("Close did not reach the wrapped store's io.Closer: %v", err)
	}
}

// TestStorageUsesAWrappersOwnCapability: a capability the wrapper
// implements itself is the one called; its AppendsInline is its own (a
// wrapper that does not report it is not inline).
func TestStorageUsesAWrappersOwnCapability(t *testing.T) {
	m := memory.New()
	w := &timedLog{BreadStore: m, log: m}
	s := core.NewStorage(w)
	if !s.Has(core.StoreCrumbLog | core.StoreRuns) {
		t.Fatalf("Capabilities() = %v", s.Capabilities())
	}
	if s.AppendsInline() {
		t.Error("a wrapping log that does not report AppendsInline is inline")
	}
	ctx := t.Context()
	sess, _ := s.CreateSession(ctx, core.NewSession{})
	entry := core.CrumbLogEntry{RunID: "r", Seq: 1, SessionID: sess.ID, Type: core.TypeAgentRunStart,
		Crumb: &core.AgentRunStart{CrumbBase: core.CrumbBase{RunID: "r", SessionID: sess.ID, Seq: 1}}}
	if err := s.AppendCrumbs(ctx, []core.CrumbLogEntry{entry}); err != nil {
		t.Fatal(err)
	}
	if w.appends.Load() != 1 {
		t.Errorf("the wrapper's AppendCrumbs ran %d times, want 1", w.appends.Load())
	}
}

func TestNewStorageOfAStorageIsItself(t *testing.T) {
	s := core.NewStorage(memory.New())
	if core.NewStorage(s) != s {
		t.Error("NewStorage(*Storage) built a second Storage")
	}
	if core.NewStorage(nil) != nil {
		t.Error("NewStorage(nil) is not nil")
	}
}

func TestStoreCapabilityString(t *testing.T) {
	for _, c := range []struct {
		c    core.StoreCapability
		want string
	}{
		{0, "none"},
		{core.StoreRuns, "RunStore"},
		{core.StoreRuns | core.StoreCrumbLog, "RunStore|CrumbLog"},
		{core.StoreClose, "io.Closer"},
	} {
		if got := c.c.String(); got != c.want {
			t.Errorf("%d.String() = %q, want %q", c.c, got, c.want)
		}
	}
	if n := len(core.StoreCapabilities()); n != 17 {
		t.Errorf("StoreCapabilities() has %d, want 17", n)
	}
}

func TestAs(t *testing.T) {
	m := memory.New()
	w := &countingStore{BreadStore: &countingStore{BreadStore: m}}
	var rs core.RunStore
	if !core.As(w, &rs) || rs != core.RunStore(m) {
		t.Error("As did not find the RunStore two wrappers down")
	}
	var ms *memory.Store
	if !core.As(w, &ms) || ms != m {
		t.Error("As did not find the concrete store")
	}
	var bs core.BreadStore
	if !core.As(w, &bs) || bs != core.BreadStore(w) {
		t.Error("As of a type v has is v itself")
	}
	var q *memory.Queue
	for _, c := range []struct {
		name   string
		v      any
		target any
	}{
		{"nil value", nil, &rs},
		{"nil target", w, nil},
		{"not a pointer", w, rs},
		{"nil pointer", w, (*core.RunStore)(nil)},
		{"a type nothing has", w, &q},
		{"a value without As", newBare(), &rs},
	} {
		if core.As(c.v, c.target) {
			t.Errorf("As with %s = true", c.name)
		}
	}
}
