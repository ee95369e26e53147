package engine_test

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

// TestToolEmitsDecideEveryType: a crumb type added to core fails here until
// the engine decides whether a tool may emit it.
func TestToolEmitsDecideEveryType(t *testing.T) {
	decisions := engine.ToolEmitDecisionsForTest()
	crumbtest.CheckDecisions(t, "tool emits", decisions)
	var admitted []string
	for typ, ok := range decisions {
		if ok {
			admitted = append(admitted, typ)
		}
	}
	slices.Sort(admitted)
	if want := []string{core.TypeFileGenerated, core.TypeToolResultPartial}; !slices.Equal(admitted, want) {
		t.Errorf("a tool may emit %v, want %v", admitted, want)
	}
}

// foreign is a crumb of a type core does not define that claims to be a
// file:generated.
type foreign struct{ core.CrumbBase }

func (*foreign) CrumbType() string { return core.TypeFileGenerated }

// TestToolEmitIsCheckedAndStamped: a tool tries every crumb type, each of
// another run; only file:generated and tool:result:partial reach the
// stream, stamped with the tool's own run (and call), and every other is
// TOOL_EMIT_REFUSED and absent.
func TestToolEmitIsCheckedAndStamped(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		name := "execute"
		if streaming {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			refused := map[string]error{}
			emitAll := func(tc core.ToolContext) {
				samples := append(crumbtest.Samples(), &foreign{CrumbBase: core.CrumbBase{RunID: "other-run"}}, nil)
				for _, c := range samples {
					typ := "nil"
					if c != nil {
						typ = c.CrumbType()
						*c.Base() = core.CrumbBase{AgentID: "intruder", RunID: "other-run", SessionID: "other-session", Seq: 99}
					}
					if _, ok := c.(*foreign); ok {
						typ = "foreign"
					}
					refused[typ] = tc.Emit(c)
				}
			}
			var tool core.Tool
			if streaming {
				tool = typed.DefineStreamingTool("emitter", "", func(_ context.Context, _ struct{}, tc core.ToolContext) iter.Seq2[string, error] {
					return func(yield func(string, error) bool) {
						emitAll(tc)
						yield("done", nil)
					}
				})
			} else {
				tool = typed.DefineTool("emitter", "", func(_ context.Context, _ struct{}, tc core.ToolContext) (string, error) {
					emitAll(tc)
					return "done", nil
				})
			}
			a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}}
			tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_emitter", struct{}{}), modeltest.Text("ok")), []*core.Agent{a})
			cs, err := tb.run(t, "a", "go", core.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{core.TypeAgentRunStart, core.TypeToolCall, core.TypeFileGenerated, core.TypeToolResultPartial}
			if streaming { // the engine's own partial for the yielded value
				want = append(want, core.TypeToolResultPartial)
			}
			wantTypes(t, cs, append(want, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)...)
			start := cs[0].Base()
			for _, c := range cs {
				b := c.Base()
				if b.RunID != start.RunID || b.AgentID != "a" || b.SessionID != start.SessionID {
					t.Errorf("%s is stamped %+v, want the tool's run %+v", c.CrumbType(), b, start)
				}
			}
			p := find[*core.ToolResultPartial](cs)[0]
			if p.ToolCallID != "call-tool_emitter" || p.ToolName != "tool_emitter" {
				t.Errorf("the partial names call %q of %q, want the tool's own", p.ToolCallID, p.ToolName)
			}
			for typ, err := range refused {
				admitted := typ == core.TypeFileGenerated || typ == core.TypeToolResultPartial
				if admitted && err != nil {
					t.Errorf("emit %s: %v", typ, err)
				}
				if !admitted && !errors.Is(err, core.ErrToolEmitRefused) {
					t.Errorf("emit %s: %v, want TOOL_EMIT_REFUSED", typ, err)
				}
			}
			if len(refused) != len(core.CrumbTypes())+2 {
				t.Errorf("%d emits recorded", len(refused))
			}
		})
	}
}

// TestToolEmitAfterReturnIsDropped: goroutines that outlive their tool emit
// after the run ended; each crumb is dropped and logged, never sent on the
// run's closed channel.
func TestToolEmitAfterReturnIsDropped(t *testing.T) {
	logs := &lockedLog{}
	release := make(chan struct{})
	var late sync.WaitGroup
	var mu sync.Mutex
	var lateErrs []error
	tool := typed.DefineTool("leaky", "", func(_ context.Context, _ struct{}, tc core.ToolContext) (string, error) {
		for range 4 {
			late.Go(func() {
				<-release
				err := tc.Emit(&core.FileGenerated{URI: "bread://blob/late"})
				mu.Lock()
				lateErrs = append(lateErrs, err)
				mu.Unlock()
			})
		}
		return "done", nil
	})
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}}
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_leaky", struct{}{}), modeltest.Text("ok")), []*core.Agent{a},
		func(c *engine.Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	cs, err := tb.run(t, "a", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeToolCall, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
	close(release)
	late.Wait()
	if len(lateErrs) != 4 {
		t.Fatalf("%d late emits returned", len(lateErrs))
	}
	for _, err := range lateErrs {
		if !errors.Is(err, core.ErrToolEmitRefused) {
			t.Errorf("a late emit answered %v, want TOOL_EMIT_REFUSED", err)
		}
	}
	if got := strings.Count(logs.String(), "emitted after it returned"); got != 4 {
		t.Errorf("%d late emits logged, want 4:\n%s", got, logs.String())
	}
}

// TestToolEmitsWhileRunningFromManyGoroutines: a tool's goroutines emit
// concurrently while it runs; every crumb arrives, stamped.
func TestToolEmitsWhileRunningFromManyGoroutines(t *testing.T) {
	const n = 32
	tool := typed.DefineTool("fan", "", func(_ context.Context, _ struct{}, tc core.ToolContext) (string, error) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { _ = tc.Emit(&core.ToolResultPartial{Result: "tick"}) })
		}
		wg.Wait()
		return "done", nil
	})
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}}
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_fan", struct{}{}), modeltest.Text("ok")), []*core.Agent{a})
	cs, err := tb.run(t, "a", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(find[*core.ToolResultPartial](cs)); got != n {
		t.Fatalf("%d partials, want %d: %v", got, n, types(cs))
	}
}

// TestToolEmitOutsideARun: a ToolContext without a door (a tool called
// outside a run, as MCP exposes it) refuses instead of panicking.
func TestToolEmitOutsideARun(t *testing.T) {
	if err := (core.ToolContext{}).Emit(&core.FileGenerated{}); !errors.Is(err, core.ErrToolEmitRefused) {
		t.Fatalf("emit outside a run: %v", err)
	}
}
