package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// TestRunEndCarriesUsage: agent:run:end reports the tokens of the run's
// model calls, each call's and their sum, and a run resumed after a human
// answer counts the calls made before it suspended too (kept on the
// checkpoint).
func TestRunEndCarriesUsage(t *testing.T) {
	call := core.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2} // modeltest's finish
	cases := []struct {
		name   string
		script []modeltest.Turn
		answer bool
		calls  int
	}{
		{"one call", []modeltest.Turn{modeltest.Text("Hello.")}, false, 1},
		{"a call, a human's answer, a call", []modeltest.Turn{
			modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
			modeltest.Text("Published."),
		}, true, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTestbed(t, modeltest.New(tc.script...), []*core.Agent{askAgent()})
			cs, err := tb.run(t, "publisher", "publish it", core.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.answer {
				if cs, err = collect(tb.in.Resume(context.Background(), suspendOn(t, cs).CheckpointID, map[string]any{"ok": true})); err != nil {
					t.Fatal(err)
				}
			}
			end, ok := cs[len(cs)-1].(*core.AgentRunEnd)
			if !ok {
				t.Fatalf("the run ended with %s", cs[len(cs)-1].CrumbType())
			}
			want := core.Usage{}
			for range tc.calls {
				want = want.Add(call)
			}
			if end.Usage == nil || *end.Usage != want || !slices.Equal(end.ModelCalls, slices.Repeat([]core.Usage{call}, tc.calls)) {
				t.Errorf("usage %+v, model calls %+v; want %+v over %d calls", end.Usage, end.ModelCalls, want, tc.calls)
			}
		})
	}
}
