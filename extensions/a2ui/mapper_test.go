package a2ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/extensions/a2ui"
)

var update = flag.Bool("update", false, "rewrite the golden file")

func rb(ts int64) core.CrumbBase {
	return core.CrumbBase{AgentID: "assistant", RunID: "r1", SessionID: "s1", Timestamp: ts}
}

// TestMapGolden: every crumb type of the original's table, one JSON line
// per spec in testdata/specs.golden, and the crumbs with no component.
func TestMapGolden(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	crumbs := []core.Crumb{
		&core.AgentRunStart{CrumbBase: rb(1), Input: "hi"},
		&core.TextDelta{CrumbBase: rb(2), Delta: "**Hel**"},
		&core.ReasoningDelta{CrumbBase: rb(3), Delta: "thinking"},
		&core.FileGenerated{CrumbBase: rb(4), URI: "bread://blob/1", MimeType: "image/png", Name: "chart.png"},
		&core.ToolInputStart{CrumbBase: rb(5), ToolCallID: "c1", ToolName: "tool_add"},
		&core.ToolInputDelta{CrumbBase: rb(5), ToolCallID: "c1", Delta: "{}"},
		&core.ToolInputEnd{CrumbBase: rb(5), ToolCallID: "c1"},
		&core.ToolCall{CrumbBase: rb(6), ToolCallID: "c1", ToolName: "tool_add", Args: map[string]int{"a": 1}},
		&core.ToolResultPartial{CrumbBase: rb(6), ToolCallID: "c1", ToolName: "tool_add", Result: 0},
		&core.ToolResult{CrumbBase: rb(7), ToolCallID: "c1", ToolName: "tool_add", Result: map[string]int{"sum": 1}, DurationMs: 4},
		&core.ToolError{CrumbBase: rb(8), ToolCallID: "c2", ToolName: "tool_fetch", Error: &core.BreadError{Code: core.CodeToolError, Message: "offline"}, DurationMs: 2},
		&core.HumanRequired{CrumbBase: rb(9), CheckpointID: "cp1", ToolName: "confirm", Prompt: "May I?", Kind: core.HumanInput},
		&core.HumanRequired{CrumbBase: rb(9), CheckpointID: "cp2", ToolName: "tool_delete", Kind: core.HumanApproval},
		&core.HumanResumed{CrumbBase: rb(10), CheckpointID: "cp1", Response: raw(`{"ok":true}`), Kind: core.HumanInput},
		&core.SubagentRunStart{CrumbBase: rb(11), ParentAgentID: "boss", SubagentID: "writer"},
		&core.SubagentRunEnd{CrumbBase: rb(12), ParentAgentID: "boss", SubagentID: "writer", Output: "draft"},
		&core.PipelineStepStart{CrumbBase: rb(13), PipelineID: "p", StepIndex: 0},
		&core.PipelineStepEnd{CrumbBase: rb(14), PipelineID: "p", StepIndex: 0, Output: "x"},
		&core.LoopStart{CrumbBase: rb(15), LoopID: "l1", Pipeline: []string{"drafter", "critic"}, MaxIterations: 3},
		&core.LoopIterationStart{CrumbBase: rb(16), LoopID: "l1", Iteration: 1},
		&core.LoopIterationEnd{CrumbBase: rb(17), LoopID: "l1", Iteration: 1, Output: "d"},
		&core.LoopEnd{CrumbBase: rb(18), LoopID: "l1", Status: core.LoopCompleted, Iterations: 1, Result: "d"},
		&core.TaskStart{CrumbBase: rb(19), TaskRunID: "tr1", TaskID: "extract", Model: core.TaskModelInfo{Provider: "p", Model: "small"}},
		&core.TaskEnd{CrumbBase: rb(20), TaskRunID: "tr1", TaskID: "extract", Status: core.TaskFailed, DurationMs: 9, Error: "bad json"},
		&core.AgentError{CrumbBase: rb(21), Error: &core.BreadError{Code: core.CodeProviderError, Message: "model gone", Context: map[string]any{"secret": 1}}},
		&core.AgentRunEnd{CrumbBase: rb(22), Output: "Hello"},
		&core.AgentRunEnd{CrumbBase: rb(23), Output: raw(`{"kind":"file","uri":"bread://blob/2","mimeType":"text/csv","name":"report.csv"}`)},
	}
	var buf bytes.Buffer
	for _, c := range crumbs {
		buf.WriteString(c.CrumbType() + " →")
		specs := a2ui.Map(c)
		if len(specs) == 0 {
			buf.WriteString(" (none)\n")
			continue
		}
		buf.WriteByte('\n')
		for _, s := range specs {
			line, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			buf.WriteString("  ")
			buf.Write(line)
			buf.WriteByte('\n')
		}
	}
	path := filepath.Join("testdata", "specs.golden")
	if *update {
		_ = os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("specs differ\n got:\n%s\nwant:\n%s", buf.Bytes(), want)
	}
}

// TestPluginOnARun: the plugin sees a real engine run's crumbs, in order,
// and stops at Close.
func TestPluginOnARun(t *testing.T) {
	var mu sync.Mutex
	var got []string
	p, err := a2ui.New(func(_ context.Context, s a2ui.Spec, c core.Crumb) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(s.Type)+":"+s.Message+s.Content)
	})
	if err != nil {
		t.Fatal(err)
	}
	in, err := engine.New(engine.Config{Store: memory.New(), Providers: modeltest.New(modeltest.Text("hi"), modeltest.Text("again")).Registry("m"),
		Agents: []*core.Agent{{ID: "assistant", Model: core.ModelRef{Provider: "m", Model: "m"}}}, Plugins: []core.BreadPlugin{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	if _, err := in.RunSync(t.Context(), "assistant", "go", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	want := []string{"progress:Agent assistant started", "markdown:hi", "progress:Done"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("specs %v, want %v", got, want)
	}
	got = nil
	mu.Unlock()
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := in.RunSync(t.Context(), "assistant", "go", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("specs after Close: %v", got)
	}
}

func TestNewNeedsAHandler(t *testing.T) {
	if _, err := a2ui.New(nil); err == nil {
		t.Error("New(nil) accepted")
	}
}
