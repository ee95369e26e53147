package agui_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/agui"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func b(run, agent string, ts int64) core.CrumbBase {
	return core.CrumbBase{AgentID: agent, RunID: run, SessionID: "thread-1", Timestamp: ts}
}

func rb(ts int64) core.CrumbBase { return b("r1", "assistant", ts) }

// mapAll maps a crumb stream and ends it, as the ingress does, and encodes
// each event as one JSON line.
func mapAll(t *testing.T, m *agui.Mapper, cs []core.Crumb) []byte {
	t.Helper()
	var buf bytes.Buffer
	var evs []map[string]any
	write := func(e any) {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, v)
	}
	for _, c := range cs {
		for _, e := range m.Map(c) {
			write(e)
		}
	}
	for _, e := range m.End(999) {
		write(e)
	}
	if err := verify(evs); err != nil {
		t.Errorf("not a valid AG-UI sequence: %v\n%s", err, buf.String())
	}
	return buf.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestMapperGolden(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name   string
		crumbs []core.Crumb
	}{
		{"text", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1), Input: "hi"},
			&core.TextDelta{CrumbBase: rb(2), Delta: "Hel"},
			&core.TextDelta{CrumbBase: rb(3), Delta: "lo"},
			&core.AgentRunEnd{CrumbBase: rb(4), Output: "Hello", DurationMs: 3},
		}},
		{"reasoning", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1), Input: "why"},
			&core.ReasoningDelta{CrumbBase: rb(2), Delta: "The user asks "},
			&core.ReasoningDelta{CrumbBase: rb(2), Delta: "why."},
			&core.TextDelta{CrumbBase: rb(2), Delta: "Because."},
			&core.ReasoningDelta{CrumbBase: rb(3), Delta: "Check it."},
			&core.ToolCall{CrumbBase: rb(4), ToolCallID: "c1", ToolName: "tool_check"},
			&core.ToolResult{CrumbBase: rb(5), ToolCallID: "c1", ToolName: "tool_check", Result: "ok"},
			&core.ReasoningDelta{CrumbBase: rb(5), Delta: "Done."},
			&core.AgentRunEnd{CrumbBase: rb(6), Output: "Because."},
		}},
		{"tool_streamed_args", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1), Input: "add"},
			&core.TextDelta{CrumbBase: rb(2), Delta: "Adding."},
			&core.ToolInputStart{CrumbBase: rb(3), ToolCallID: "c1", ToolName: "tool_add"},
			&core.ToolInputDelta{CrumbBase: rb(4), ToolCallID: "c1", Delta: `{"a":2,`},
			&core.ToolInputDelta{CrumbBase: rb(5), ToolCallID: "c1", Delta: `"b":3}`},
			&core.ToolInputEnd{CrumbBase: rb(6), ToolCallID: "c1"},
			&core.ToolCall{CrumbBase: rb(7), ToolCallID: "c1", ToolName: "tool_add", Args: raw(`{"a":2,"b":3}`)},
			&core.ToolResult{CrumbBase: rb(8), ToolCallID: "c1", ToolName: "tool_add", Result: map[string]int{"sum": 5}},
			&core.TextDelta{CrumbBase: rb(9), Delta: "It is 5"},
			&core.AgentRunEnd{CrumbBase: rb(10), Output: "It is 5"},
		}},
		{"tool_unstreamed_and_error", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1)},
			&core.ToolCall{CrumbBase: rb(2), ToolCallID: "c1", ToolName: "tool_add", Args: map[string]int{"a": 1}},
			&core.ToolResult{CrumbBase: rb(3), ToolCallID: "c1", ToolName: "tool_add", Result: "plain text"},
			&core.ToolCall{CrumbBase: rb(4), ToolCallID: "c2", ToolName: "tool_fetch"},
			&core.ToolError{CrumbBase: rb(5), ToolCallID: "c2", ToolName: "tool_fetch", Error: &core.BreadError{Code: core.CodeToolError, Message: "offline", Context: map[string]any{"secret": "x"}}},
			&core.AgentRunEnd{CrumbBase: rb(6), Output: "done"},
		}},
		{"null_output", []core.Crumb{
			// An output read back from a crumb log is raw JSON; a null one
			// is no result (the spec refuses "result": null).
			&core.AgentRunStart{CrumbBase: rb(1)},
			&core.AgentRunEnd{CrumbBase: rb(2), Output: raw(`null`)},
		}},
		{"files", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1)},
			&core.FileGenerated{CrumbBase: rb(2), URI: "bread://blob/1", MimeType: "image/png"},
			&core.TextDelta{CrumbBase: rb(3), Delta: "here"},
			&core.AgentRunEnd{CrumbBase: rb(4), Output: raw(`{"kind":"file","uri":"bread://blob/2","mimeType":"text/csv","name":"report.csv"}`)},
		}},
		{"subagent_mediated", []core.Crumb{
			&core.AgentRunStart{CrumbBase: b("r1", "boss", 1)},
			&core.SubagentRunStart{CrumbBase: b("r2", "writer", 2), ParentAgentID: "boss", SubagentID: "writer"},
			&core.SubagentRunEnd{CrumbBase: b("r2", "writer", 3), ParentAgentID: "boss", SubagentID: "writer", Output: "draft"},
			&core.AgentRunEnd{CrumbBase: b("r1", "boss", 4), Output: "ok"},
		}},
		{"subagent_passthrough", []core.Crumb{
			&core.AgentRunStart{CrumbBase: b("r1", "boss", 1)},
			&core.TextDelta{CrumbBase: b("r1", "boss", 2), Delta: "delegating"},
			&core.ToolCall{CrumbBase: b("r1", "boss", 3), ToolCallID: "d1", ToolName: "core_delegate", Args: map[string]string{"agentId": "writer"}},
			&core.AgentRunStart{CrumbBase: b("r2", "writer", 4)},
			&core.TextDelta{CrumbBase: b("r2", "writer", 5), Delta: "draft"},
			&core.AgentRunEnd{CrumbBase: b("r2", "writer", 6), Output: "draft"},
			&core.ToolResult{CrumbBase: b("r1", "boss", 7), ToolCallID: "d1", ToolName: "core_delegate", Result: "draft"},
			&core.ToolCall{CrumbBase: b("r1", "boss", 8), ToolCallID: "d2", ToolName: "core_delegate", Args: map[string]string{"agentId": "critic"}},
			&core.AgentRunStart{CrumbBase: b("r3", "critic", 9)},
			&core.AgentError{CrumbBase: b("r3", "critic", 10), Error: &core.BreadError{Code: core.CodeProviderError, Message: "down"}},
			&core.ToolError{CrumbBase: b("r1", "boss", 11), ToolCallID: "d2", ToolName: "core_delegate", Error: &core.BreadError{Code: core.CodeProviderError, Message: "down"}},
			&core.AgentRunEnd{CrumbBase: b("r1", "boss", 12), Output: "draft"},
		}},
		{"task", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1)},
			&core.ToolCall{CrumbBase: rb(2), ToolCallID: "t1", ToolName: "task_extract", Args: map[string]string{"text": "x"}},
			&core.TaskStart{CrumbBase: rb(3), TaskRunID: "tr1", TaskID: "extract", Model: core.TaskModelInfo{Provider: "p", Model: "small"}},
			&core.TaskEnd{CrumbBase: rb(4), TaskRunID: "tr1", TaskID: "extract", Status: core.TaskCompleted, DurationMs: 7, Usage: &core.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}},
			&core.ToolResult{CrumbBase: rb(5), ToolCallID: "t1", ToolName: "task_extract", Result: []string{"x"}},
			&core.AgentRunEnd{CrumbBase: rb(6), Output: "ok"},
		}},
		{"loop_and_pipeline", []core.Crumb{
			&core.AgentRunStart{CrumbBase: b("r1", "host", 1)},
			&core.LoopStart{CrumbBase: b("r1", "host", 2), LoopID: "l1", Pipeline: []string{"drafter"}, MaxIterations: 2},
			&core.LoopIterationStart{CrumbBase: b("r1", "host", 3), LoopID: "l1", Iteration: 1},
			&core.PipelineStepStart{CrumbBase: b("p1", "drafter", 4), PipelineID: "loop", StepIndex: 0},
			&core.PipelineStepEnd{CrumbBase: b("p1", "drafter", 5), PipelineID: "loop", StepIndex: 0, Output: "d"},
			&core.LoopIterationEnd{CrumbBase: b("r1", "host", 6), LoopID: "l1", Iteration: 1, Output: "d"},
			&core.LoopEnd{CrumbBase: b("r1", "host", 7), LoopID: "l1", Status: core.LoopCompleted, Iterations: 1, Result: "d"},
			&core.AgentRunEnd{CrumbBase: b("r1", "host", 8), Output: "final"},
		}},
		{"error", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1)},
			&core.TextDelta{CrumbBase: rb(2), Delta: "partial"},
			&core.LoopStart{CrumbBase: rb(3), LoopID: "l1", Pipeline: []string{"a"}, MaxIterations: 1},
			&core.LoopIterationStart{CrumbBase: rb(4), LoopID: "l1", Iteration: 1},
			&core.AgentError{CrumbBase: rb(5), Error: &core.BreadError{Code: core.CodeProviderError, Message: "model gone", Cause: os.ErrNotExist}},
		}},
		{"error_before_run", []core.Crumb{
			&core.AgentError{CrumbBase: core.CrumbBase{AgentID: "assistant", Timestamp: 1}, Error: &core.BreadError{Code: core.CodeValidationError, Message: "bad input"}},
		}},
		{"human_interrupt", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1)},
			&core.TextDelta{CrumbBase: rb(2), Delta: "Let me ask."},
			&core.ToolCall{CrumbBase: rb(3), ToolCallID: "h1", ToolName: "human_approve", Args: map[string]string{"url": "x"}},
			&core.HumanRequired{CrumbBase: rb(4), CheckpointID: "cp1", ToolName: "approve", Schema: raw(`{"url":"x"}`), Prompt: "May I?", Kind: core.HumanInput},
		}},
		{"approval_interrupt", []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1)},
			&core.ToolCall{CrumbBase: rb(2), ToolCallID: "c1", ToolName: "tool_delete"},
			&core.HumanRequired{CrumbBase: rb(3), CheckpointID: "cp2", ToolName: "tool_delete", Kind: core.HumanApproval},
		}},
		{"resumed", []core.Crumb{
			&core.HumanResumed{CrumbBase: rb(10), CheckpointID: "cp1", Response: raw(`{"ok":true}`), Kind: core.HumanInput},
			&core.ToolResult{CrumbBase: rb(11), ToolCallID: "h1", ToolName: "human_approve", Result: raw(`{"ok":true}`)},
			&core.TextDelta{CrumbBase: rb(12), Delta: "Published."},
			&core.AgentRunEnd{CrumbBase: rb(13), Output: "Published."},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, mapAll(t, agui.NewMapper(), tt.crumbs))
		})
	}
}

// TestThreadMapperPinsTheThread: the ingress's mapper reports the client's
// thread even when a resumed delegated run has a session of its own.
func TestThreadMapperPinsTheThread(t *testing.T) {
	m := agui.NewThreadMapper("client-thread")
	c := &core.HumanResumed{CrumbBase: core.CrumbBase{RunID: "child", SessionID: "child-session", Timestamp: 1}, CheckpointID: "cp"}
	evs := m.Map(c)
	if len(evs) != 1 || evs[0].ThreadID() != "client-thread" {
		t.Fatalf("events %+v", evs)
	}
}

// TestEndWithoutInterruptIsSilent: a stream cut before its terminal crumb
// reports no outcome it does not know.
func TestEndWithoutInterruptIsSilent(t *testing.T) {
	m := agui.NewMapper()
	m.Map(&core.AgentRunStart{CrumbBase: rb(1)})
	m.Map(&core.TextDelta{CrumbBase: rb(2), Delta: "x"})
	if evs := m.End(3); len(evs) != 0 {
		t.Fatalf("End emitted %d events", len(evs))
	}
}

// TestMapperSequentialRuns: a stream carrying one run after another (a
// listener's view) opens a new AG-UI run for each.
func TestMapperSequentialRuns(t *testing.T) {
	m := agui.NewMapper()
	var types []string
	for _, c := range []core.Crumb{
		&core.AgentRunStart{CrumbBase: b("r1", "a", 1)},
		&core.AgentRunEnd{CrumbBase: b("r1", "a", 2)},
		&core.AgentRunStart{CrumbBase: b("r2", "a", 3)},
		&core.AgentRunEnd{CrumbBase: b("r2", "a", 4)},
	} {
		for _, e := range m.Map(c) {
			types = append(types, string(e.Type())+":"+e.RunID())
		}
	}
	want := []string{"RUN_STARTED:r1", "RUN_FINISHED:r1", "RUN_STARTED:r2", "RUN_FINISHED:r2"}
	if len(types) != len(want) {
		t.Fatalf("got %v", types)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("got %v, want %v", types, want)
		}
	}
}
