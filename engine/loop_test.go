package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

func loopHost(cfg core.LoopConfig, turns ...modeltest.Turn) (*core.Agent, *modeltest.Model) {
	a, m := scripted("host", turns...)
	a.Loop = &cfg
	return a, m
}

func call(name string, args any) modeltest.Turn { return modeltest.ToolCall(name, args) }

func loopTrace(cs []core.Crumb) []string {
	var out []string
	for _, c := range cs {
		switch v := c.(type) {
		case *core.LoopStart:
			out = append(out, "start:"+strings.Join(v.Pipeline, ","))
		case *core.LoopIterationStart:
			out = append(out, "it-start")
		case *core.LoopIterationEnd:
			out = append(out, "it-end="+asJSONString(v.Output))
		case *core.LoopEnd:
			out = append(out, "end:"+string(v.Status)+"="+asJSONString(v.Result))
		}
	}
	return out
}

func TestLoopLifecycle(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		turns  []modeltest.Turn
		trace  []string
		status core.LoopStatus
	}{
		{
			name: "finished by the host",
			max:  3,
			turns: []modeltest.Turn{
				call("core_start_loop", map[string]any{"pipeline": []string{"drafter", "critic"}, "input": "topic"}),
				call("core_iterate_loop", map[string]any{"feedback": "shorter"}),
				call("core_finish_loop", map[string]any{}),
				modeltest.Text("final"),
			},
			trace: []string{"start:drafter,critic", "it-start", `it-end="c:d:topic"`, "it-start",
				`it-end="c:d:{\"feedback\":\"shorter\",\"previousOutput\":\"c:d:topic\"}"`,
				`end:completed="c:d:{\"feedback\":\"shorter\",\"previousOutput\":\"c:d:topic\"}"`},
			status: core.LoopCompleted,
		},
		{
			name: "exhausted at the cap",
			max:  1,
			turns: []modeltest.Turn{
				call("core_start_loop", map[string]any{"pipeline": []string{"drafter"}, "input": "x"}),
				call("core_iterate_loop", map[string]any{}),
				modeltest.Text("final"),
			},
			trace:  []string{"start:drafter", "it-start", `it-end="d:x"`, `end:exhausted="d:x"`},
			status: core.LoopExhausted,
		},
		{
			name: "left open: closed as completed when the run ends",
			max:  5,
			turns: []modeltest.Turn{
				call("core_start_loop", map[string]any{"pipeline": []string{"drafter"}, "input": "x"}),
				modeltest.Text("final"),
			},
			trace:  []string{"start:drafter", "it-start", `it-end="d:x"`, `end:completed="d:x"`},
			status: core.LoopCompleted,
		},
		{
			name: "left open: closed as failed when the run fails",
			max:  5,
			turns: []modeltest.Turn{
				call("core_start_loop", map[string]any{"pipeline": []string{"drafter"}, "input": "x"}),
				modeltest.Fail(errors.New("model gone")),
			},
			trace:  []string{"start:drafter", "it-start", `it-end="d:x"`, "end:failed=null"},
			status: core.LoopFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, hostModel := loopHost(core.LoopConfig{Pool: []string{"drafter", "critic"}, MaxIterations: tt.max}, tt.turns...)
			tb := newTestbed(t, modeltest.New(), []*core.Agent{host, echoAgent("drafter", "d:"), echoAgent("critic", "c:")})
			cs, _ := tb.run(t, "host", "go", core.RunOptions{})
			if got := loopTrace(cs); !slices.Equal(got, tt.trace) {
				t.Errorf("trace\n got %q\nwant %q", got, tt.trace)
			}
			loops, err := tb.store.ListLoops(context.Background(), core.LoopFilter{AgentID: "host"})
			if err != nil || len(loops) != 1 || loops[0].Status != tt.status {
				t.Fatalf("loop record %+v %v", loops, err)
			}
			detail, _ := tb.store.GetLoop(context.Background(), loops[0].ID)
			if len(detail.Iterations) != loops[0].Iterations || detail.Iterations[0].Index != 1 {
				t.Errorf("iterations %+v", detail)
			}
			if sys := hostModel.Requests()[0].System; !strings.Contains(sys, "## Agent Loop") || !strings.Contains(sys, "drafter, critic") {
				t.Errorf("loop section in the prompt: %q", sys)
			}
		})
	}
}

func TestLoopToolErrors(t *testing.T) {
	host, _ := loopHost(core.LoopConfig{Pool: []string{"drafter"}, MaxIterations: 2},
		call("core_iterate_loop", map[string]any{}),
		call("core_start_loop", map[string]any{"pipeline": []string{"stranger"}}),
		call("core_start_loop", map[string]any{"pipeline": []string{"drafter"}}),
		call("core_start_loop", map[string]any{"pipeline": []string{"drafter"}}),
		modeltest.Text("done"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{host, echoAgent("drafter", "d:")})
	cs, err := tb.run(t, "host", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, te := range find[*core.ToolError](cs) {
		codes = append(codes, te.Error.Code)
	}
	if want := []string{core.CodeNoActiveLoop, core.CodeLoopAgentNotInPool, core.CodeLoopAlreadyActive}; !slices.Equal(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
}

func TestLoopHooks(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	add := func(s string) { mu.Lock(); calls = append(calls, s); mu.Unlock() }
	flaky, flakyModel := scripted("flaky", modeltest.Fail(errors.New("transient")), modeltest.Text("second try"), modeltest.Fail(errors.New("again")))
	_ = flakyModel
	hooks := core.LoopHooks{
		OnInit:           func(_ context.Context, lc core.LoopContext) { add("init:" + strings.Join(lc.Pipeline, ",")) },
		OnIterationStart: func(_ context.Context, lc core.LoopContext, _ any) { add("start:" + itoa(lc.Iteration)) },
		OnIterationEnd: func(_ context.Context, lc core.LoopContext, out any) (*core.AfterRunResult, error) {
			add("end:" + itoa(lc.Iteration))
			return &core.AfterRunResult{Output: "judged " + asJSONString(out)}, nil
		},
		OnError: func(_ context.Context, lc core.LoopContext, err *core.BreadError) (*core.OnErrorResult, error) {
			add("error:" + itoa(lc.Iteration))
			if lc.Iteration == 1 {
				return &core.OnErrorResult{Action: core.Retry}, nil
			}
			return &core.OnErrorResult{Action: core.Recover, Output: "recovered"}, nil
		},
		OnFinish: func(_ context.Context, lc core.LoopContext, s core.LoopStatus) {
			add("finish:" + string(s) + ":" + itoa(lc.Iteration))
		},
	}
	host, hostModel := loopHost(core.LoopConfig{Pool: []string{"flaky"}, MaxIterations: 3, Hooks: hooks},
		call("core_start_loop", map[string]any{"pipeline": []string{"flaky"}, "input": "x"}),
		call("core_iterate_loop", map[string]any{}),
		call("core_finish_loop", map[string]any{}),
		modeltest.Text("done"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{host, flaky})
	if _, err := tb.run(t, "host", "go", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "init:flaky start:1 error:1 end:1 start:2 error:2 end:2 finish:completed:2"
	if got := strings.Join(calls, " "); got != want {
		t.Errorf("hooks\n got %s\nwant %s", got, want)
	}
	msgs := hostModel.Requests()[1].Messages
	var res struct {
		Output string `json:"output"`
	}
	_ = json.Unmarshal(msgs[len(msgs)-1].Parts[0].Output, &res)
	if res.Output != `judged "second try"` {
		t.Errorf("onIterationEnd replaces what the host sees: %q", res.Output)
	}
}

func itoa(n int) string { return strings.TrimSpace(asJSONString(n)) }
