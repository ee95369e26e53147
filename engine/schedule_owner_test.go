package engine_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// TestSchedulesRunAsTheirIdentity: under the session ownership rule a
// schedule's tick runs as its RunAs, as if that caller had started it: the
// run is RunAs's (StartedBy), the session the schedule names is created
// for RunAs (its id is the operator's choice, so any form does), and a
// session another identity owns refuses the tick, whether the schedule
// runs as another identity or as the operator (no RunAs). Before, every
// tick ran without an identity and could continue anyone's session.
func TestSchedulesRunAsTheirIdentity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alice := &core.AuthIdentity{Subject: "alice", Claims: map[string]any{"bread.strategy": "jwt"}}
		bob := &core.AuthIdentity{Subject: "bob", Claims: map[string]any{"bread.strategy": "jwt"}}
		tb := newTestbed(t, modeltest.New(modeltest.Text("report")), []*core.Agent{textAgent("writer")}, withQueue(2), func(c *engine.Config) {
			st := core.NewStorage(c.Store)
			st.OwnSessions(core.SessionOwners{})
			c.Store = st
			c.Schedules = []engine.Schedule{
				{Name: "alice-notes", Spec: "@every 1h", AgentID: "writer", Session: "notes", RunAs: alice},
				{Name: "alice-fresh", Spec: "@every 1h", AgentID: "writer", RunAs: alice},
				{Name: "bob-on-alice", Spec: "@every 1h", AgentID: "writer", Session: "notes", RunAs: bob},
				{Name: "operator-on-alice", Spec: "@every 1h", AgentID: "writer", Session: "notes"},
				{Name: "operator-own", Spec: "@every 1h", AgentID: "writer", Session: "ops-log"},
			}
		})
		at := time.Unix(1_800_000_000, 0)
		tick := func(name string) (string, error) {
			err := tb.in.WorkJobForTest(t.Context(), core.Job{Kind: core.JobKindTick, Key: core.ScheduleTickKey(name, at)})
			return engine.ScheduleRunID(name, at), err
		}
		aliceKey := core.OwnerKey(alice)

		for name, want := range map[string]string{"alice-notes": aliceKey, "alice-fresh": aliceKey, "operator-own": ""} {
			runID, err := tick(name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			rec := waitRecord(t, tb.store, runID, status(core.RunCompleted))
			if rec.StartedBy != want {
				t.Errorf("%s: the run's starter %q, want %q", name, rec.StartedBy, want)
			}
			sess, err := tb.store.GetSession(t.Context(), rec.SessionID)
			if err != nil || sess.Owner != want {
				t.Errorf("%s: the session %+v, %v, want owner %q", name, sess, err, want)
			}
		}
		if rec, _ := tb.store.GetRun(t.Context(), engine.ScheduleRunID("alice-notes", at)); rec.SessionID != "notes" {
			t.Errorf("alice's schedule ran in session %q, want notes", rec.SessionID)
		}
		for _, name := range []string{"bob-on-alice", "operator-on-alice"} {
			runID, err := tick(name)
			if be := (*core.BreadError)(nil); !errors.As(err, &be) || be.Code != core.CodeSessionNotFound {
				t.Errorf("%s: the tick ended %v, want SESSION_NOT_FOUND", name, err)
			}
			if _, err := tb.store.GetRun(t.Context(), runID); err == nil {
				t.Errorf("%s started a run on alice's session", name)
			}
		}
		msgs, _ := tb.store.GetMessages(t.Context(), "notes")
		if len(msgs) != 2 {
			t.Errorf("alice's session holds %d messages, want her one run's 2", len(msgs))
		}
	})
}
