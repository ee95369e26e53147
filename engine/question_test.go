package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// askingTool asks a human the first time it runs, and answers with what
// the human said (and its arguments) once it runs again with the answer;
// asks more than once when again is set.
func askingTool(runs *atomic.Int32, again bool) core.Tool {
	return core.Tool{
		Name: "book", Description: "books a table", InputSchema: json.RawMessage(`{"type":"object","properties":{"at":{"type":"string"}}}`),
		Execute: func(_ context.Context, args json.RawMessage, tc core.ToolContext) (any, error) {
			n := runs.Add(1)
			if tc.Answer == nil || (again && n == 2) {
				return nil, &core.ToolQuestion{Schema: json.RawMessage(`{"type":"object","properties":{"seats":{"type":"integer"}}}`), Prompt: "How many seats?"}
			}
			return map[string]any{"args": args, "answer": tc.Answer}, nil
		},
	}
}

func TestToolQuestionSuspendsAndResumes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		again bool
	}{{"one question", false}, {"asked twice", true}} {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			agent := &core.Agent{ID: "host", Model: mockModel(), Tools: []core.Tool{askingTool(&runs, tt.again)}}
			tb := newTestbed(t, modeltest.New(
				modeltest.ToolCall("tool_book", map[string]string{"at": "8pm"}),
				modeltest.Text("Booked."),
			), []*core.Agent{agent})
			cs, err := tb.run(t, "host", "book it", core.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantTypes(t, cs, core.TypeAgentRunStart, core.TypeToolCall, core.TypeHumanRequired)
			hr := suspendOn(t, cs)
			if hr.Kind != core.HumanInput || hr.Prompt != "How many seats?" || hr.ToolName != "tool_book" || asJSON(t, hr.Schema) != `{"type":"object","properties":{"seats":{"type":"integer"}}}` {
				t.Errorf("human:required %+v", hr)
			}
			cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, map[string]any{"seats": 4}))
			if err != nil {
				t.Fatal(err)
			}
			if tt.again {
				wantTypes(t, cont, core.TypeHumanResumed, core.TypeToolCall, core.TypeHumanRequired)
				if _, err := tb.store.GetCheckpoint(context.Background(), hr.CheckpointID); !errors.Is(err, core.ErrCheckpointNotFound) {
					t.Errorf("the first question's checkpoint is settled: %v", err)
				}
				hr = suspendOn(t, cont)
				if cont, err = collect(tb.in.Resume(context.Background(), hr.CheckpointID, map[string]any{"seats": 4})); err != nil {
					t.Fatal(err)
				}
			}
			wantTypes(t, cont, core.TypeHumanResumed, core.TypeToolCall, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
			if got := asJSON(t, cont[2].(*core.ToolResult).Result); got != `{"answer":{"seats":4},"args":{"at":"8pm"}}` {
				t.Errorf("the tool runs again with its arguments and the answer: %s", got)
			}
			msgs := tb.model.Requests()[1].Messages
			res := msgs[len(msgs)-1].Parts[0]
			if res.ToolCallID != "call-tool_book" || string(res.Output) != `{"answer":{"seats":4},"args":{"at":"8pm"}}` {
				t.Errorf("the model reads the tool's result: %+v", res)
			}
		})
	}
}

// TestApprovedToolAsks: an ask-gated tool that asks a human once approved
// suspends the resumed run again on its question.
func TestApprovedToolAsks(t *testing.T) {
	var runs atomic.Int32
	agent := &core.Agent{ID: "host", Model: mockModel(), Tools: []core.Tool{askingTool(&runs, false)}, Permissions: core.Permissions{Ask: []string{"tool:book"}}}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("tool_book", map[string]string{"at": "8pm"}),
		modeltest.Text("Booked."),
	), []*core.Agent{agent})
	cs, err := tb.run(t, "host", "book it", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	approval := suspendOn(t, cs)
	if approval.Kind != core.HumanApproval {
		t.Fatalf("the gated call waits for approval: %+v", approval)
	}
	cont, err := collect(tb.in.Resume(context.Background(), approval.CheckpointID, map[string]any{"approved": true}))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cont, core.TypeHumanResumed, core.TypeToolCall, core.TypeHumanRequired)
	question := suspendOn(t, cont)
	if question.Kind != core.HumanInput || question.Prompt != "How many seats?" {
		t.Fatalf("the approved tool's question: %+v", question)
	}
	cont, err = collect(tb.in.Resume(context.Background(), question.CheckpointID, map[string]any{"seats": 2}))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cont, core.TypeHumanResumed, core.TypeToolCall, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
	if got := asJSON(t, cont[2].(*core.ToolResult).Result); got != `{"answer":{"seats":2},"args":{"at":"8pm"}}` {
		t.Errorf("result %s", got)
	}
}
