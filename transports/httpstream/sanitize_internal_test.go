package httpstream

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
)

// TestClientViewsDecideEveryType: a crumb type added to core fails here
// until clientViews decides what a client sees of it.
func TestClientViewsDecideEveryType(t *testing.T) {
	crumbtest.CheckDecisions(t, "client views", clientViews)
}

// clientFields lists, per crumb type, the JSON fields (beside the base)
// whose passing to clients clientViews has decided. A field added to a
// crumb type fails TestClientSafeShowsDecidedFields until it is listed here,
// after a look at that type's view: a whole view lets every field through.
var clientFields = map[string][]string{
	core.TypeAgentRunStart:      {"input", "skill", "parentRunId"},
	core.TypeTextDelta:          {"delta"},
	core.TypeReasoningDelta:     {"delta"},
	core.TypeFileGenerated:      {"uri", "mimeType", "name"},
	core.TypeToolCall:           {"toolCallId", "toolName", "args"},
	core.TypeToolInputStart:     {"toolCallId", "toolName"},
	core.TypeToolInputDelta:     {"toolCallId", "delta"},
	core.TypeToolInputEnd:       {"toolCallId"},
	core.TypeToolResult:         {"toolCallId", "toolName", "result", "durationMs"},
	core.TypeToolResultPartial:  {"toolCallId", "toolName", "result"},
	core.TypeToolError:          {"toolCallId", "toolName", "error", "durationMs"},
	core.TypeHumanRequired:      {"checkpointId", "toolName", "toolCallId", "schema", "prompt", "kind", "set"},
	core.TypeHumanResumed:       {"checkpointId", "response", "kind"},
	core.TypeSubagentRunStart:   {"parentAgentId", "subagentId"},
	core.TypeSubagentRunEnd:     {"parentAgentId", "subagentId", "output"},
	core.TypePipelineStepStart:  {"pipelineId", "stepIndex"},
	core.TypePipelineStepEnd:    {"pipelineId", "stepIndex", "output"},
	core.TypeLoopStart:          {"loopId", "pipeline", "maxIterations"},
	core.TypeLoopIterationStart: {"loopId", "iteration"},
	core.TypeLoopIterationEnd:   {"loopId", "iteration", "output"},
	core.TypeLoopEnd:            {"loopId", "status", "iterations", "result"},
	core.TypeTaskStart:          {"taskRunId", "taskId", "model"},
	core.TypeTaskEnd:            {"taskRunId", "taskId", "status", "durationMs", "usage", "error"},
	core.TypeAgentRunEnd:        {"output", "durationMs", "files", "usage", "modelCalls"},
	core.TypeAgentError:         {"error"},
}

// jsonFields lists the JSON names of the fields c's struct adds to its base.
func jsonFields(c core.Crumb) []string {
	var out []string
	typ := reflect.TypeOf(c).Elem()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Anonymous && f.Type == reflect.TypeFor[core.CrumbBase]() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

func TestClientSafeShowsDecidedFields(t *testing.T) {
	for _, typ := range core.CrumbTypes() {
		got := jsonFields(crumbtest.Sample(typ))
		if !slices.Equal(got, clientFields[typ]) {
			t.Errorf("%s has the fields %v; the decided ones are %v: decide in clientViews what a client sees of the new ones, then list them here", typ, got, clientFields[typ])
		}
	}
	for _, c := range crumbtest.Samples() {
		out := ClientSafe(c)
		if out.CrumbType() != c.CrumbType() || *out.Base() != *c.Base() {
			t.Errorf("%s: ClientSafe changed its type or base: %+v", c.CrumbType(), out)
		}
		if out != c && !slices.Contains([]string{core.TypeToolError, core.TypeAgentError}, c.CrumbType()) {
			t.Errorf("%s: a crumb with nothing to take out is copied", c.CrumbType())
		}
	}
}

// TestClientSafeReducesEveryError: agent:error and tool:error carry code
// and message only, and a message that is only a plain Go error's text
// (core.AsBreadError's fallback) is core.Sanitize's; the shared crumb is
// left as it was.
func TestClientSafeReducesEveryError(t *testing.T) {
	secret := errors.New("dial postgres://app:hunter2@db")
	cases := []struct {
		name string
		err  *core.BreadError
		want string
	}{
		{"written", &core.BreadError{Code: "QUOTA", Message: "out of quota", Context: map[string]any{"token": "hunter2"}, Cause: secret}, `{"name":"BreadError","code":"QUOTA","message":"out of quota"}`},
		{"a plain error's text", core.AsBreadError(secret, core.CodeToolError), `{"name":"BreadError","code":"INTERNAL_ERROR","message":"internal server error"}`},
		{"none", nil, `{"name":"BreadError","code":"INTERNAL_ERROR","message":"internal server error"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []core.Crumb{&core.AgentError{Error: tc.err}, &core.ToolError{ToolName: "t", Error: tc.err}} {
				raw, err := json.Marshal(ClientSafe(c))
				if err != nil {
					t.Fatal(err)
				}
				var got struct{ Error json.RawMessage }
				_ = json.Unmarshal(raw, &got)
				if string(got.Error) != tc.want {
					t.Errorf("%s: error %s, want %s", c.CrumbType(), got.Error, tc.want)
				}
			}
		})
	}
	orig := cases[0].err
	_ = ClientSafe(&core.AgentError{Error: orig})
	if orig.Context == nil || orig.Cause == nil {
		t.Error("ClientSafe modified the shared crumb's error")
	}
}

// foreignCrumb is a crumb of another package: its type is one core does
// not list, or claims one core does.
type foreignCrumb struct {
	typ string
	core.CrumbBase
	Secret string `json:"secret"`
}

func (f *foreignCrumb) CrumbType() string { return f.typ }

// TestClientSafeShowsOnlyTheBaseOfAnUndecidedCrumb: a type without a view,
// a Go type other than core's for a decided type, and a nil crumb show the
// type and base alone.
func TestClientSafeShowsOnlyTheBaseOfAnUndecidedCrumb(t *testing.T) {
	base := core.CrumbBase{AgentID: "a", RunID: "r", SessionID: "s", Timestamp: 7, Seq: 3}
	cases := []struct {
		c    core.Crumb
		want string
	}{
		{&foreignCrumb{typ: "plugin:audit", CrumbBase: base, Secret: "hunter2"}, `{"type":"plugin:audit","agentId":"a","runId":"r","sessionId":"s","timestamp":7,"seq":3}`},
		{&foreignCrumb{typ: core.TypeToolCall, CrumbBase: base, Secret: "hunter2"}, `{"type":"tool:call","agentId":"a","runId":"r","sessionId":"s","timestamp":7,"seq":3}`},
		{(*core.ToolCall)(nil), `{"type":"tool:call","agentId":"","timestamp":0}`},
	}
	for _, tc := range cases {
		got, err := AppendCrumbJSON(nil, ClientSafe(tc.c))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s (%v), want %s", tc.c.CrumbType(), got, err, tc.want)
		}
	}
	if ClientSafe(nil) != nil {
		t.Error("ClientSafe(nil) is not nil")
	}
}
