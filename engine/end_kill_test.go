package engine_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// TestARunKilledRightAfterItsEndRecordEndsOnce is a violation the chaos
// harness found (issue 31): runs recorded completed whose crumb log had
// no terminal crumb, and no log line about them on any replica. A run's
// end record was committed, then its agent:run:end went to the crumb log
// in a write of its own, after it; a replica SIGKILLed between the two
// commits left the record ended and the log never ended, and no sweeper
// looks at an ended record. Here the process dies right after the write
// that ends the run's record; another instance then sweeps: the log must
// hold exactly one terminal crumb, its last, agreeing with the record.
func TestARunKilledRightAfterItsEndRecordEndsOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn modeltest.Turn
		// pipeline runs the agent as a pipeline's step (a nested run, its
		// crumbs through the pipeline's stream).
		pipeline bool
		// parallel makes the step a parallel step's one branch (its
		// crumbs reach the stream from the branch's goroutine).
		parallel bool
		// delegated runs the agent as a supervisor's delegate (its crumbs
		// reach the stream through its delegate call's door), under
		// visibility vis (passthrough when empty).
		delegated bool
		vis       core.Visibility
		// loop runs the agent as the one step of a loop's iteration (its
		// crumbs reach the stream through the loop tool's door).
		loop bool
		// suspends: turn calls a human tool, and the record written is
		// the run's suspended one, its log to end with human:required.
		suspends bool
	}{
		{name: "suspended for a human", turn: modeltest.ToolCall("human_approve_publish", map[string]string{}), suspends: true},
		{name: "completed", turn: modeltest.Text("done")},
		{name: "failed", turn: modeltest.Fail(errors.New("the model broke"))},
		{name: "a pipeline step completed", turn: modeltest.Text("done"), pipeline: true},
		{name: "a pipeline step failed", turn: modeltest.Fail(errors.New("the model broke")), pipeline: true},
		{name: "a parallel branch completed", turn: modeltest.Text("done"), pipeline: true, parallel: true},
		{name: "a parallel branch failed", turn: modeltest.Fail(errors.New("the model broke")), pipeline: true, parallel: true},
		{name: "a delegated run completed", turn: modeltest.Text("done"), delegated: true},
		{name: "a delegated run failed", turn: modeltest.Fail(errors.New("the model broke")), delegated: true},
		{name: "a run delegated under mediate completed", turn: modeltest.Text("done"), delegated: true, vis: core.Mediate},
		{name: "a loop iteration's step completed", turn: modeltest.Text("done"), loop: true},
		{name: "a loop iteration's step failed", turn: modeltest.Fail(errors.New("the model broke")), loop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const lease = 300 * time.Millisecond
				inner := memory.New()
				store := &diesAfterEnd{Store: inner}
				step := core.PipelineStep{Type: core.StepAgent, AgentID: "a"}
				if tc.parallel {
					step = core.PipelineStep{Type: core.StepParallel, Steps: []core.PipelineStep{step}}
				}
				boss, _ := scripted("boss", modeltest.ToolCalls(delegate("d1", "a", "task")), modeltest.Text("composed"))
				boss.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "a", Visibility: tc.vis}}}
				host, _ := loopHost(core.LoopConfig{Pool: []string{"a"}, MaxIterations: 1},
					call("core_start_loop", map[string]any{"pipeline": []string{"a"}, "input": "x"}), modeltest.Text("final"))
				asking := textAgent("a")
				asking.HumanTools = askAgent().HumanTools
				a, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{asking, boss, host}, Providers: modeltest.New(tc.turn).Registry("mock"), RunLease: lease,
					Pipelines: map[string][]core.PipelineStep{"p": {step}}})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = a.Stop(context.Background()) })
				stream := a.Run(context.Background(), "a", "hi", core.RunOptions{})
				if tc.pipeline {
					stream = a.RunPipeline(context.Background(), "p", "hi")
				}
				if tc.delegated {
					stream = a.Run(context.Background(), "boss", "go", core.RunOptions{})
				}
				if tc.loop {
					stream = a.Run(context.Background(), "host", "go", core.RunOptions{})
				}
				cs, _ := collect(stream)
				starts := slices.DeleteFunc(find[*core.AgentRunStart](cs), func(s *core.AgentRunStart) bool { return s.AgentID != "a" })
				if len(starts) == 0 && tc.vis != core.Mediate {
					t.Fatalf("no agent:run:start of a in %v", types(cs))
				}
				if tc.vis == core.Mediate {
					// The run shows as subagent:run:start.
					subs := find[*core.SubagentRunStart](cs)
					if len(subs) == 0 {
						t.Fatalf("no subagent:run:start in %v", types(cs))
					}
					starts = []*core.AgentRunStart{{CrumbBase: subs[0].CrumbBase}}
				}
				id := starts[0].RunID
				synctest.Wait()
				if !store.died() {
					t.Fatal("the run's end record was never written")
				}
				// The killed process is gone; another instance sweeps.
				newTestbed(t, modeltest.New(), []*core.Agent{textAgent("a")}, func(c *engine.Config) { c.Store, c.RunLease = keepOpen{inner}, lease })
				time.Sleep(4 * lease) // fake time: sweeps
				synctest.Wait()
				rec := getRun(t, inner, id)
				if tc.suspends {
					// Nobody sweeps a suspended run: its log must say what
					// it waits on.
					logged, err := inner.GetCrumbs(context.Background(), id, 0, 0)
					if err != nil {
						t.Fatal(err)
					}
					hr, ok := core.Crumb(nil), false
					if len(logged) > 0 {
						hr = logged[len(logged)-1].Crumb
						_, ok = hr.(*core.HumanRequired)
					}
					if rec.Status != core.RunSuspended || !ok || hr.(*core.HumanRequired).CheckpointID != rec.CheckpointID {
						t.Fatalf("the run's record is %s on %q and its log ends with %v, want human:required on it", rec.Status, rec.CheckpointID, hr)
					}
					return
				}
				if tc.vis == core.Mediate {
					// Its log holds what its supervisor's stream shows of
					// it, subagent:run:end for its end (a failed run's
					// agent:error shows as nothing).
					if logged := loggedTypes(t, inner, id); rec.Status != core.RunCompleted || !slices.Equal(logged, []string{core.TypeSubagentRunStart, core.TypeSubagentRunEnd}) {
						t.Fatalf("the run's record is %s and its log holds %v, want subagent:run:start and subagent:run:end", rec.Status, logged)
					}
					return
				}
				n, last := terminals(t, inner, id)
				if n != 1 || !core.IsTerminal(last) {
					t.Fatalf("the run's record is %s and its log holds %d terminal crumbs, ending with %q: want exactly one, its last", rec.Status, n, last)
				}
				want := core.TypeAgentError
				if rec.Status == core.RunCompleted {
					want = core.TypeAgentRunEnd
				}
				if last != want || !rec.Status.Final() {
					t.Fatalf("the record says %s (%s), the log ends with %s", rec.Status, rec.ErrorCode, last)
				}
			})
		})
	}
}

// diesAfterEnd is the store as a process sees it that is killed right
// after the write that ends a run's record (final, or suspended): that
// write is committed, nothing after it is (crumb-log appends included).
type diesAfterEnd struct {
	*memory.Store
	mu   sync.Mutex
	dead bool
}

func (s *diesAfterEnd) died() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

// write makes one write of the process: none once it died; the process
// dies once a write that ends a run's record is made.
func (s *diesAfterEnd) write(ends bool, do func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return errDied
	}
	err := do()
	if err == nil && ends {
		s.dead = true
	}
	return err
}

// ends reports whether r ends its run's stretch: final, or suspended.
func ends(r core.RunRecord) bool { return r.Status.Final() || r.Status == core.RunSuspended }

func (s *diesAfterEnd) Close() error        { return nil }
func (s *diesAfterEnd) AppendsInline() bool { return false }

func (s *diesAfterEnd) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	return s.write(false, func() error { return s.Store.AppendCrumbs(ctx, entries) })
}

func (s *diesAfterEnd) PutRun(ctx context.Context, r core.RunRecord) error {
	return s.write(ends(r), func() error { return s.Store.PutRun(ctx, r) })
}

func (s *diesAfterEnd) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	var ours bool
	err := s.write(ends(r), func() (err error) { ours, err = s.Store.EndRun(ctx, r, owner); return err })
	return ours, err
}

func (s *diesAfterEnd) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	var ours bool
	err := s.write(w.Run != nil && ends(*w.Run), func() (err error) { ours, err = s.Store.WriteRun(ctx, w); return err })
	return ours, err
}

func (s *diesAfterEnd) AddMessage(ctx context.Context, sessionID string, m core.SessionMessage) error {
	return s.write(false, func() error { return s.Store.AddMessage(ctx, sessionID, m) })
}

func (s *diesAfterEnd) RenewRunLeases(ctx context.Context, owner string, until int64) (int, error) {
	var n int
	err := s.write(false, func() (err error) { n, err = s.Store.RenewRunLeases(ctx, owner, until); return err })
	return n, err
}

// RunCrumbLog makes the wrapper the crumb log its run writes append to
// (core.RunCrumbWriter), as every SQL store is: a run's end write carries
// its crumbs.
func (s *diesAfterEnd) RunCrumbLog() core.CrumbLog { return s }
