package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// writeLog is the memory store listing the writes a run makes.
type writeLog struct {
	*memory.Store
	mu     sync.Mutex
	writes []string
}

func (s *writeLog) note(w string) {
	s.mu.Lock()
	s.writes = append(s.writes, w)
	s.mu.Unlock()
}

func (s *writeLog) CreateSession(ctx context.Context, n core.NewSession) (core.Session, error) {
	s.note("create session")
	return s.Store.CreateSession(ctx, n)
}

func (s *writeLog) AddMessage(ctx context.Context, id string, m core.SessionMessage) error {
	s.note("add " + string(m.Role))
	return s.Store.AddMessage(ctx, id, m)
}

func (s *writeLog) SuspendRun(ctx context.Context, id string, msgs []core.SessionMessage, cps ...core.CheckpointRecord) error {
	s.note(fmt.Sprintf("append %d messages", len(msgs)))
	return s.Store.SuspendRun(ctx, id, msgs, cps...)
}

func (s *writeLog) PutRun(ctx context.Context, r core.RunRecord) error {
	s.note("record " + string(r.Status))
	return s.Store.PutRun(ctx, r)
}

func (s *writeLog) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	s.note("record " + string(r.Status))
	return s.Store.EndRun(ctx, r, owner)
}

func (s *writeLog) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	note := fmt.Sprintf("write: session %t, %d messages", w.Session != nil, len(w.Messages))
	if w.Run != nil {
		note += ", record " + string(w.Run.Status)
	}
	s.note(note)
	return s.Store.WriteRun(ctx, w)
}

func (s *writeLog) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

// A run on a session it creates writes its start (the session, its running
// record, the user's message) and its end (the answer, its ended record)
// as one write each on a store that makes them atomic; a hook that could
// read the session between them keeps them apart, and so does a run on a
// session the client names.
func TestARunsStartAndEndAreOneWriteEach(t *testing.T) {
	sessionSeen := func(store core.BreadStore, what string, want int) func(ctx context.Context, hc core.HookContext) error {
		return func(ctx context.Context, hc core.HookContext) error {
			msgs, err := store.GetMessages(ctx, hc.SessionID)
			if err != nil || len(msgs) != want {
				return fmt.Errorf("%s saw %d messages (%v), want %d", what, len(msgs), err, want)
			}
			return nil
		}
	}
	for _, c := range []struct {
		name  string
		opts  core.RunOptions
		hooks func(store core.BreadStore) core.Hooks
		want  []string
	}{
		{"a new session", core.RunOptions{}, nil, []string{
			"write: session true, 1 messages, record running",
			"write: session false, 1 messages, record completed",
		}},
		{"a BeforeRun hook sees the session", core.RunOptions{}, func(store core.BreadStore) core.Hooks {
			seen := sessionSeen(store, "BeforeRun", 0)
			return core.Hooks{BeforeRun: func(ctx context.Context, hc core.HookContext, input any) (*core.BeforeRunResult, error) {
				return nil, seen(ctx, hc)
			}}
		}, []string{
			"write: session true, 0 messages, record running",
			"add user",
			"write: session false, 1 messages, record completed",
		}},
		{"an AfterRun hook sees the answer", core.RunOptions{}, func(store core.BreadStore) core.Hooks {
			seen := sessionSeen(store, "AfterRun", 2)
			return core.Hooks{AfterRun: func(ctx context.Context, hc core.HookContext, input, output any, d time.Duration) (*core.AfterRunResult, error) {
				return nil, seen(ctx, hc)
			}}
		}, []string{
			"write: session true, 1 messages, record running",
			"add assistant",
			"record completed",
		}},
		{"a named session", core.RunOptions{Session: core.SessionOptions{ID: "named"}}, nil, []string{
			"create session",
			"record running",
			"add user",
			"write: session false, 1 messages, record completed",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := &writeLog{Store: memory.New()}
			tb := newTestbed(t, modeltest.New(modeltest.Text("the answer")), []*core.Agent{textAgent("a")}, func(cfg *engine.Config) {
				cfg.Store = store
				if c.hooks != nil {
					cfg.Hooks = c.hooks(store)
				}
			})
			cs, err := tb.run(t, "a", "hi", c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := store.list(); asJSON(t, got) != asJSON(t, c.want) {
				t.Errorf("writes = %q, want %q", got, c.want)
			}
			sessionID := cs[0].Base().SessionID
			msgs, err := store.GetMessages(context.Background(), sessionID)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 2 || msgs[0].Role != core.RoleUser || msgs[1].Role != core.RoleAssistant {
				t.Errorf("session holds %+v, want the user's message and the answer", msgs)
			}
			if r := getRun(t, store, cs[0].Base().RunID); r.Status != core.RunCompleted || r.SessionID != sessionID {
				t.Errorf("record %+v, want completed on %s", r, sessionID)
			}
		})
	}
}

// failingWrites is the memory store refusing every RunWriter write.
type failingWrites struct{ *memory.Store }

func (failingWrites) WriteRun(context.Context, core.RunWrite) (bool, error) {
	return false, &core.BreadError{Code: core.CodeStoreUnavailable, Message: "the store is down"}
}

// A run whose start write fails ends with the store's error and leaves
// nothing behind: no session, no record.
func TestARunWhoseStartWriteFailsLeavesNothing(t *testing.T) {
	store := failingWrites{memory.New()}
	tb := newTestbed(t, modeltest.New(modeltest.Text("never")), []*core.Agent{textAgent("a")}, func(cfg *engine.Config) { cfg.Store = store })
	cs, err := tb.run(t, "a", "hi", core.RunOptions{})
	wantCode(t, err, core.CodeStoreUnavailable)
	if len(cs) != 1 || cs[0].CrumbType() != core.TypeAgentError {
		t.Fatalf("crumbs %v, want the agent:error alone", types(cs))
	}
	sessions, _ := store.ListSessions(context.Background(), core.SessionFilter{})
	runs, _ := store.ListRuns(context.Background(), core.RunFilter{})
	if len(sessions) != 0 || len(runs) != 0 {
		t.Fatalf("the failed start left %d sessions and %d runs", len(sessions), len(runs))
	}
}
