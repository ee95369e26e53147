package schedule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/schedule"
)

func known(id string) bool { return id == "writer" }

func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		s    []schedule.Schedule
		ok   bool
	}{
		{"cron in a zone", []schedule.Schedule{{Name: "nightly", Spec: "0 3 * * *", TimeZone: "Europe/Rome", AgentID: "writer"}}, true},
		{"every", []schedule.Schedule{{Name: "often", Spec: "@every 90s", AgentID: "writer", Session: "log"}}, true},
		{"bad cron", []schedule.Schedule{{Name: "a", Spec: "every day", AgentID: "writer"}}, false},
		{"sub-second interval", []schedule.Schedule{{Name: "a", Spec: "@every 10ms", AgentID: "writer"}}, false},
		{"unknown zone", []schedule.Schedule{{Name: "a", Spec: "0 * * * *", TimeZone: "Mars/Olympus", AgentID: "writer"}}, false},
		{"unknown agent", []schedule.Schedule{{Name: "a", Spec: "@every 1m", AgentID: "nobody"}}, false},
		{"no name", []schedule.Schedule{{Spec: "@every 1m", AgentID: "writer"}}, false},
		{"a name with a space", []schedule.Schedule{{Name: "a b", Spec: "@every 1m", AgentID: "writer"}}, false},
		{"a bad session id", []schedule.Schedule{{Name: "a", Spec: "@every 1m", AgentID: "writer", Session: "../x"}}, false},
		{"twice", []schedule.Schedule{{Name: "a", Spec: "@every 1m", AgentID: "writer"}, {Name: "a", Spec: "@every 2m", AgentID: "writer"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := schedule.Check(c.s, known)
			if c.ok != (err == nil) {
				t.Fatalf("Check = %v, want ok=%v", err, c.ok)
			}
			if err != nil {
				if be := core.AsBreadError(err, ""); be.Code != core.CodeInvalidConfig {
					t.Fatalf("Check = %v, want INVALID_CONFIG", err)
				}
				return
			}
			for _, info := range schedule.Infos(got, time.Unix(1_800_000_000, 0)) {
				if info.Next.IsZero() {
					t.Fatalf("a checked schedule has no next tick: %+v", info)
				}
			}
		})
	}
}

func TestInfosAreSortedAndNextIsInTheZone(t *testing.T) {
	got, err := schedule.Check([]schedule.Schedule{
		{Name: "z", Spec: "@every 1h", AgentID: "writer"},
		{Name: "a", Spec: "0 3 * * *", TimeZone: "Europe/Rome", AgentID: "writer"},
	}, known)
	if err != nil {
		t.Fatal(err)
	}
	infos := schedule.Infos(got, time.Unix(1_800_000_000, 0))
	if len(infos) != 2 || infos[0].Name != "a" || infos[1].Name != "z" {
		t.Fatalf("Infos = %+v, want a then z", infos)
	}
	rome, _ := time.LoadLocation("Europe/Rome")
	if n := infos[0].Next.In(rome); n.Hour() != 3 || n.Minute() != 0 {
		t.Fatalf("next tick %v is not 03:00 in Rome", n)
	}
	if unchecked := schedule.Infos([]schedule.Schedule{{Name: "x", Spec: "@every 1h"}}, time.Now()); !unchecked[0].Next.IsZero() {
		t.Fatalf("an unchecked schedule has a next tick: %+v", unchecked)
	}
}

// starter records the runs a Timetable starts.
type starter struct {
	err  error
	runs []started
}

type started struct {
	runID, agentID, session, webhook string
	input                            any
}

func (s *starter) StartBackground(_ context.Context, runID, agentID string, input any, opts core.RunOptions, bg core.BackgroundOptions) (core.Detached, error) {
	if s.err != nil {
		return core.Detached{}, s.err
	}
	s.runs = append(s.runs, started{runID, agentID, opts.Session.ID, bg.Webhook, input})
	return core.Detached{RunID: runID, SessionID: opts.Session.ID}, nil
}

func TestTimetableWorkStartsTheTicksRun(t *testing.T) {
	checked, err := schedule.Check([]schedule.Schedule{{Name: "nightly", Spec: "0 3 * * *", AgentID: "writer", Input: "report", Session: "log", Webhook: "https://example.com/h"}}, known)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0)
	tick := core.Job{Kind: core.JobKindTick, Key: core.ScheduleTickKey("nightly", at)}
	cases := []struct {
		name    string
		job     core.Job
		err     error
		started []started
		fails   bool
	}{
		{"a tick", tick, nil, []started{{schedule.RunID("nightly", at), "writer", "log", "https://example.com/h", "report"}}, false},
		{"a tick of a schedule this replica does not know", core.Job{Kind: core.JobKindTick, Key: core.ScheduleTickKey("gone", at)}, nil, nil, false},
		{"a run that does not start", tick, errors.New("store down"), nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &starter{err: c.err}
			tt := schedule.New(checked, s, nil)
			err := tt.Work(t.Context(), c.job)
			if c.fails != (err != nil) || (c.err != nil && !errors.Is(err, c.err)) {
				t.Fatalf("Work = %v, want failure=%v wrapping %v", err, c.fails, c.err)
			}
			if len(s.runs) != len(c.started) || (len(c.started) > 0 && s.runs[0] != c.started[0]) {
				t.Fatalf("started %+v, want %+v", s.runs, c.started)
			}
		})
	}
	if jobs := schedule.New(checked, &starter{}, nil).Jobs(); len(jobs) != 1 || jobs[0].Name != "nightly" || jobs[0].Schedule == nil {
		t.Fatalf("Jobs = %+v", jobs)
	}
}

func TestRunIDIsTheTicks(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	a, b := schedule.RunID("nightly", at), schedule.RunID("nightly", at)
	if a != b || a == schedule.RunID("nightly", at.Add(time.Hour)) || a == schedule.RunID("weekly", at) {
		t.Fatal("a tick's run id is not one per schedule and tick")
	}
	if a != schedule.TickRunID(core.ScheduleTickKey("nightly", at)) {
		t.Fatal("RunID and TickRunID disagree")
	}
}
