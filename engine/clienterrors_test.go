package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

// TestPlainErrorsStayOffTheWire: every crumb field that carries an error
// message (tool:error's and task:end's here, agent:error's in
// TestAPlainErrorStaysInTheLog) says only what core.Sanitize lets through
// when the error is a plain Go error; the server's log keeps the text. A
// tool's *core.BreadError reaches the client as written, and the model
// reads the tool's error either way.
func TestPlainErrorsStayOffTheWire(t *testing.T) {
	const secret = "dial postgres://app:hunter2@db:5432 refused"
	logs := &lockedLog{}
	plain := typed.DefineTool("plain", "", func(context.Context, struct{}, core.ToolContext) (int, error) {
		return 0, errors.New(secret)
	})
	written := typed.DefineTool("written", "", func(context.Context, struct{}, core.ToolContext) (int, error) {
		return 0, &core.BreadError{Code: "QUOTA", Message: "out of quota"}
	})
	tm := modeltest.New(modeltest.Fail(errors.New(secret)))
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{plain, written}, Tasks: []string{"extract"}}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "tool_plain", Args: struct{}{}}, modeltest.Call{ID: "c2", Name: "tool_written", Args: struct{}{}},
			modeltest.Call{ID: "c3", Name: "task_extract", Args: extractArgs{Text: "t"}}),
		modeltest.Text("sorry"),
	), []*core.Agent{a}, func(c *engine.Config) {
		c.Tasks = []*core.Task{extractTask(tm)}
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	cs, err := tb.run(t, "a", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, te := range find[*core.ToolError](cs) {
		seen[te.ToolName] = te.Error.Code + ": " + te.Error.Message
	}
	want := map[string]string{
		"tool_plain":   "TOOL_ERROR: tool tool_plain failed; the server logged why",
		"tool_written": "QUOTA: out of quota",
	}
	for name, w := range want {
		if seen[name] != w {
			t.Errorf("tool:error of %s says %q, want %q", name, seen[name], w)
		}
	}
	end := last[*core.TaskEnd](t, cs)
	if end.Status != core.TaskFailed || strings.Contains(end.Error, "hunter2") || end.Error == "" {
		t.Errorf("task:end %+v", end)
	}
	runs, _ := tb.store.ListTaskRuns(context.Background(), core.TaskRunFilter{TaskID: "extract"})
	if len(runs) != 1 || runs[0].Error != end.Error {
		t.Errorf("the task run record says %+v, want task:end's %q", runs, end.Error)
	}
	if !strings.Contains(logs.String(), "hunter2") {
		t.Error("the server's log lacks the error")
	}
	var modelRead string
	for _, m := range tb.model.Requests()[1].Messages {
		for _, p := range m.Parts {
			modelRead += string(p.Output)
		}
	}
	if !strings.Contains(modelRead, "hunter2") || !strings.Contains(modelRead, "out of quota") {
		t.Errorf("the model reads %s", modelRead)
	}
}
