package core_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

// goldenCheck asserts the key fields of one decoded golden.
type goldenCheck func(t *testing.T, c core.Crumb)

// goldenCases has one row per crumb type: the concrete Go type DecodeCrumb
// must return, and what the full and the minimal golden decode to.
var goldenCases = []struct {
	typ     string
	goType  core.Crumb
	full    goldenCheck
	minimal goldenCheck
}{
	{
		typ: core.TypeAgentRunStart, goType: &core.AgentRunStart{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.AgentRunStart](t, c)
			eq(t, "AgentID", v.AgentID, "support-triage")
			eq(t, "RunID", v.RunID, "run_01J9Z3K7Q8X2VZC5M4N6P0R1ST")
			eq(t, "SessionID", v.SessionID, "sess_7f3c2a9e41b8")
			eq(t, "Timestamp", v.Timestamp, 1718035200123)
			eq(t, "Seq", v.Seq, 1)
			eq(t, "Skill", v.Skill, "billing")
			assertPayload(t, "Input", v.Input, `{"message":"My invoice INV-4411 was charged twice — can you refund one?",
				"customerId":12345678901234567890,"amount":149.90,"attachments":[],"priority":null,
				"flags":{"vip":true,"region":"eu-west-1"}}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.AgentRunStart](t, c)
			eq(t, "Seq", v.Seq, 0)
			eq(t, "Skill", v.Skill, "")
			assertPayload(t, "Input", v.Input, `"What is your refund policy?"`)
		},
	},
	{
		typ: core.TypeTextDelta, goType: &core.TextDelta{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.TextDelta](t, c)
			eq(t, "Seq", v.Seq, 3)
			eq(t, "Delta", v.Delta, "Sure — I’ve found the duplicate charge (\"INV-4411\").\nRefunding now… ✅")
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.TextDelta](t, c)
			eq(t, "Delta", v.Delta, "Sure")
			eq(t, "Seq", v.Seq, 0)
		},
	},
	{
		typ: core.TypeReasoningDelta, goType: &core.ReasoningDelta{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.ReasoningDelta](t, c)
			eq(t, "AgentID", v.AgentID, "math-tutor")
			eq(t, "Delta", v.Delta, "The user wants x such that 3x + 7 = 22, so 3x = 15 and x = 5.")
		},
		minimal: func(t *testing.T, c core.Crumb) {
			eq(t, "Delta", as[*core.ReasoningDelta](t, c).Delta, "Let me think.")
		},
	},
	{
		typ: core.TypeFileGenerated, goType: &core.FileGenerated{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.FileGenerated](t, c)
			eq(t, "URI", v.URI, "https://blobs.example.com/b/01J9Z6FILE0001")
			eq(t, "MimeType", v.MimeType, "image/webp")
			eq(t, "Name", v.Name, "sunset-over-lagoon.webp")
			eq(t, "Seq", v.Seq, 7)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.FileGenerated](t, c)
			eq(t, "MimeType", v.MimeType, "application/pdf")
			eq(t, "Name", v.Name, "")
		},
	},
	{
		typ: core.TypeToolCall, goType: &core.ToolCall{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolCall](t, c)
			eq(t, "ToolCallID", v.ToolCallID, "call_9aQ2xLm7Vt")
			eq(t, "ToolName", v.ToolName, "lookup_invoice")
			assertPayload(t, "Args", v.Args,
				`{"invoiceId":"INV-4411","accountNumber":12345678901234567890,"includeLines":true,"currency":"EUR"}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolCall](t, c)
			eq(t, "ToolName", v.ToolName, "get_time")
			assertPayload(t, "Args", v.Args, `{}`)
		},
	},
	{
		typ: core.TypeToolInputStart, goType: &core.ToolInputStart{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolInputStart](t, c)
			eq(t, "ToolCallID", v.ToolCallID, "call_9aQ2xLm7Vt")
			eq(t, "ToolName", v.ToolName, "lookup_invoice")
			eq(t, "Seq", v.Seq, 4)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			eq(t, "Seq", as[*core.ToolInputStart](t, c).Seq, 0)
		},
	},
	{
		typ: core.TypeToolInputDelta, goType: &core.ToolInputDelta{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolInputDelta](t, c)
			eq(t, "ToolCallID", v.ToolCallID, "call_9aQ2xLm7Vt")
			eq(t, "Delta", v.Delta, `{"invoiceId":"INV-44`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			eq(t, "Delta", as[*core.ToolInputDelta](t, c).Delta, `11"}`)
		},
	},
	{
		typ: core.TypeToolInputEnd, goType: &core.ToolInputEnd{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolInputEnd](t, c)
			eq(t, "ToolCallID", v.ToolCallID, "call_9aQ2xLm7Vt")
			eq(t, "Timestamp", v.Timestamp, 1718035202001)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			eq(t, "ToolCallID", as[*core.ToolInputEnd](t, c).ToolCallID, "call_9aQ2xLm7Vt")
		},
	},
	{
		typ: core.TypeToolResult, goType: &core.ToolResult{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolResult](t, c)
			eq(t, "ToolName", v.ToolName, "lookup_invoice")
			eq(t, "DurationMs", v.DurationMs, 374)
			assertPayload(t, "Result", v.Result, `{"invoice":{"id":"INV-4411","accountNumber":12345678901234567890,
				"lines":[{"sku":"PLAN-PRO","qty":1,"unitPrice":49.00},{"sku":"PLAN-PRO","qty":1,"unitPrice":49.00}],
				"charges":[{"id":"ch_1","status":"succeeded"},{"id":"ch_2","status":"succeeded"}],"paidAt":null}}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolResult](t, c)
			eq(t, "DurationMs", v.DurationMs, 1)
			assertPayload(t, "Result", v.Result, `"2024-06-10T16:00:02Z"`)
		},
	},
	{
		typ: core.TypeToolResultPartial, goType: &core.ToolResultPartial{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolResultPartial](t, c)
			eq(t, "ToolCallID", v.ToolCallID, "call_Zz81stream")
			eq(t, "ToolName", v.ToolName, "web_search")
			assertPayload(t, "Result", v.Result,
				`{"page":2,"hits":[{"url":"https://example.org/a","score":0.87}],"cursor":12345678901234567890}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			assertPayload(t, "Result", as[*core.ToolResultPartial](t, c).Result, `0.25`)
		},
	},
	{
		typ: core.TypeToolError, goType: &core.ToolError{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolError](t, c)
			eq(t, "ToolName", v.ToolName, "issue_refund")
			eq(t, "DurationMs", v.DurationMs, 1517)
			if v.Error == nil {
				t.Fatal("Error is nil")
			}
			eq(t, "Error.Code", v.Error.Code, core.CodeToolError)
			eq(t, "Error.Message", v.Error.Message, "payment gateway rejected the refund: charge already refunded")
			want := map[string]any{"toolName": "issue_refund", "attempt": float64(2), "retryable": false,
				"gateway": map[string]any{"status": float64(409)}}
			if !reflect.DeepEqual(v.Error.Context, want) {
				t.Errorf("Error.Context = %#v, want %#v", v.Error.Context, want)
			}
			if v.Error.Cause != nil {
				t.Errorf("Error.Cause = %v, want nil (causes never cross the wire)", v.Error.Cause)
			}
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.ToolError](t, c)
			eq(t, "Error.Message", v.Error.Message, "timeout after 30s")
			if v.Error.Context != nil {
				t.Errorf("Error.Context = %#v, want nil", v.Error.Context)
			}
		},
	},
	{
		typ: core.TypeHumanRequired, goType: &core.HumanRequired{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.HumanRequired](t, c)
			eq(t, "CheckpointID", v.CheckpointID, "ckpt_01J9Z8K2M4P6R8T0V2X4Z6B8D0")
			eq(t, "ToolName", v.ToolName, "approve_expense")
			eq(t, "Prompt", v.Prompt, "Approve the €1,240.00 hotel expense for the Lisbon offsite?")
			eq(t, "Kind", v.Kind, core.HumanApproval)
			assertPayload(t, "Schema", v.Schema, `{"type":"object","properties":{"approved":{"type":"boolean"},
				"amountCents":{"type":"integer","minimum":0,"maximum":12345678901234567890},
				"note":{"type":"string","maxLength":500}},"required":["approved"],"additionalProperties":false}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.HumanRequired](t, c)
			eq(t, "Prompt", v.Prompt, "")
			eq(t, "Kind", v.Kind, core.HumanInput)
			assertPayload(t, "Schema", v.Schema, `{"type":"string"}`)
		},
	},
	{
		typ: core.TypeHumanResumed, goType: &core.HumanResumed{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.HumanResumed](t, c)
			eq(t, "CheckpointID", v.CheckpointID, "ckpt_01J9Z8K2M4P6R8T0V2X4Z6B8D0")
			eq(t, "Kind", v.Kind, core.HumanApproval)
			assertPayload(t, "Response", v.Response,
				`{"approved":true,"amountCents":12345678901234567890,"note":"OK, within the Q3 travel budget"}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.HumanResumed](t, c)
			eq(t, "Kind", v.Kind, core.HumanInput)
			assertPayload(t, "Response", v.Response, `"Ada Lovelace"`)
		},
	},
	{
		typ: core.TypeSubagentRunStart, goType: &core.SubagentRunStart{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.SubagentRunStart](t, c)
			eq(t, "ParentAgentID", v.ParentAgentID, "research-supervisor")
			eq(t, "SubagentID", v.SubagentID, "web-researcher")
		},
		minimal: func(t *testing.T, c core.Crumb) {
			eq(t, "SubagentID", as[*core.SubagentRunStart](t, c).SubagentID, "web-researcher")
		},
	},
	{
		typ: core.TypeSubagentRunEnd, goType: &core.SubagentRunEnd{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.SubagentRunEnd](t, c)
			eq(t, "SubagentID", v.SubagentID, "web-researcher")
			eq(t, "Seq", v.Seq, 17)
			assertPayload(t, "Output", v.Output,
				`{"findings":["LLM costs fell 10x in 18 months"],"sources":4,"traceId":12345678901234567890}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			if v := as[*core.SubagentRunEnd](t, c); v.Output != nil {
				t.Errorf("Output = %#v, want nil for JSON null", v.Output)
			}
		},
	},
	{
		typ: core.TypePipelineStepStart, goType: &core.PipelineStepStart{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.PipelineStepStart](t, c)
			eq(t, "PipelineID", v.PipelineID, "localize-release-notes")
			eq(t, "StepIndex", v.StepIndex, 2)
			eq(t, "AgentID", v.AgentID, "translator")
			eq(t, "RunID", v.RunID, "run_01J9ZAPIPELINE000000000001")
			eq(t, "Seq", v.Seq, 5)
			eq(t, "SessionID", v.SessionID, "")
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.PipelineStepStart](t, c)
			eq(t, "StepIndex", v.StepIndex, 0)
			eq(t, "SessionID", v.SessionID, "")
		},
	},
	{
		typ: core.TypePipelineStepEnd, goType: &core.PipelineStepEnd{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.PipelineStepEnd](t, c)
			eq(t, "StepIndex", v.StepIndex, 2)
			eq(t, "Timestamp", v.Timestamp, 1718035842500)
			eq(t, "SessionID", v.SessionID, "")
			assertPayload(t, "Output", v.Output,
				`{"locale":"de-DE","text":"Neu in 2.4: schnellere Suche","buildNumber":12345678901234567890}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.PipelineStepEnd](t, c)
			eq(t, "StepIndex", v.StepIndex, 0)
			assertPayload(t, "Output", v.Output, `"New in 2.4: faster search"`)
		},
	},
	{
		typ: core.TypeLoopStart, goType: &core.LoopStart{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.LoopStart](t, c)
			eq(t, "LoopID", v.LoopID, "loop_01J9ZBLOOPID000000000001")
			eq(t, "MaxIterations", v.MaxIterations, 5)
			if !slices.Equal(v.Pipeline, []string{"outliner", "drafter", "critic"}) {
				t.Errorf("Pipeline = %q", v.Pipeline)
			}
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.LoopStart](t, c)
			if !slices.Equal(v.Pipeline, []string{"drafter"}) {
				t.Errorf("Pipeline = %q", v.Pipeline)
			}
		},
	},
	{
		typ: core.TypeLoopIterationStart, goType: &core.LoopIterationStart{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.LoopIterationStart](t, c)
			eq(t, "LoopID", v.LoopID, "loop_01J9ZBLOOPID000000000001")
			eq(t, "Iteration", v.Iteration, 1)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			eq(t, "Iteration", as[*core.LoopIterationStart](t, c).Iteration, 1)
		},
	},
	{
		typ: core.TypeLoopIterationEnd, goType: &core.LoopIterationEnd{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.LoopIterationEnd](t, c)
			eq(t, "Iteration", v.Iteration, 1)
			assertPayload(t, "Output", v.Output,
				`{"draft":"Remote work changed cities in three ways…","criticScore":6.5,"revision":12345678901234567890}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			assertPayload(t, "Output", as[*core.LoopIterationEnd](t, c).Output, `["needs a stronger thesis"]`)
		},
	},
	{
		typ: core.TypeLoopEnd, goType: &core.LoopEnd{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.LoopEnd](t, c)
			eq(t, "Status", v.Status, core.LoopCompleted)
			eq(t, "Iterations", v.Iterations, 3)
			eq(t, "Seq", v.Seq, 64)
			assertPayload(t, "Result", v.Result,
				`{"essay":"Remote work changed cities in three ways…","criticScore":9.0,"wordCount":12345678901234567890}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.LoopEnd](t, c)
			eq(t, "Status", v.Status, core.LoopExhausted)
			eq(t, "Iterations", v.Iterations, 5)
			if v.Result != nil {
				t.Errorf("Result = %#v, want nil", v.Result)
			}
		},
	},
	{
		typ: core.TypeTaskStart, goType: &core.TaskStart{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.TaskStart](t, c)
			eq(t, "TaskRunID", v.TaskRunID, "trun_01J9ZCTASK000000000000001")
			eq(t, "TaskID", v.TaskID, "classify-intent")
			eq(t, "Model", v.Model, core.TaskModelInfo{Provider: "openai", Model: "gpt-4o-mini"})
		},
		minimal: func(t *testing.T, c core.Crumb) {
			eq(t, "Model", as[*core.TaskStart](t, c).Model,
				core.TaskModelInfo{Provider: "anthropic", Model: "claude-3-5-haiku-latest"})
		},
	},
	{
		typ: core.TypeTaskEnd, goType: &core.TaskEnd{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.TaskEnd](t, c)
			eq(t, "Status", v.Status, core.TaskFailed)
			eq(t, "DurationMs", v.DurationMs, 820)
			if v.Usage == nil {
				t.Fatal("Usage is nil")
			}
			eq(t, "Usage", *v.Usage, core.Usage{InputTokens: 1830, OutputTokens: 212, TotalTokens: 2042})
			if !strings.HasPrefix(v.Error, "OUTPUT_PARSE_ERROR: ") {
				t.Errorf("Error = %q", v.Error)
			}
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.TaskEnd](t, c)
			eq(t, "Status", v.Status, core.TaskCompleted)
			if v.Usage != nil {
				t.Errorf("Usage = %+v, want nil", v.Usage)
			}
			eq(t, "Error", v.Error, "")
		},
	},
	{
		typ: core.TypeAgentRunEnd, goType: &core.AgentRunEnd{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.AgentRunEnd](t, c)
			eq(t, "DurationMs", v.DurationMs, 8421)
			eq(t, "Seq", v.Seq, 42)
			want := []core.FileOutput{
				{
					URI:      "s3://bread-blobs/run_01J9Z4A0B1C2D3E4F5G6H7J8K9/revenue-chart.png",
					MimeType: "image/png", Name: "revenue-chart.png",
				},
				{URI: "s3://bread-blobs/run_01J9Z4A0B1C2D3E4F5G6H7J8K9/blob-7e21"},
			}
			if !slices.Equal(v.Files, want) {
				t.Errorf("Files = %+v, want %+v", v.Files, want)
			}
			assertPayload(t, "Output", v.Output, `{"summary":"Q2 revenue grew 14% quarter over quarter.",
				"ledgerTotal":12345678901234567890,"sections":[{"title":"Revenue","words":312},{"title":"Churn","words":188}]}`)
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.AgentRunEnd](t, c)
			if v.Files != nil {
				t.Errorf("Files = %+v, want nil", v.Files)
			}
			assertPayload(t, "Output", v.Output, `"Done: the report is attached to the ticket."`)
		},
	},
	{
		typ: core.TypeAgentError, goType: &core.AgentError{},
		full: func(t *testing.T, c core.Crumb) {
			v := as[*core.AgentError](t, c)
			eq(t, "RunID", v.RunID, "run_01J9Z3K7Q8X2VZC5M4N6P0R1ST")
			eq(t, "Seq", v.Seq, 12)
			if v.Error == nil {
				t.Fatal("Error is nil")
			}
			eq(t, "Error.Code", v.Error.Code, core.CodeRateLimited)
			eq(t, "Error.Message", v.Error.Message, "provider openai returned 429 after 3 retries")
			want := map[string]any{"provider": "openai", "model": "gpt-4o-mini", "retries": float64(3),
				"retryAfterMs": float64(2000), "requestIds": []any{"req_a1", "req_b2"}}
			if !reflect.DeepEqual(v.Error.Context, want) {
				t.Errorf("Error.Context = %#v, want %#v", v.Error.Context, want)
			}
		},
		minimal: func(t *testing.T, c core.Crumb) {
			v := as[*core.AgentError](t, c)
			eq(t, "AgentID", v.AgentID, "no-such-agent")
			eq(t, "RunID", v.RunID, "")
			eq(t, "SessionID", v.SessionID, "")
			eq(t, "Error.Code", v.Error.Code, core.CodeAgentNotFound)
			eq(t, "Error.Message", v.Error.Message, `agent "no-such-agent" is not registered`)
		},
	},
}

func TestGoldenCasesCoverEveryCrumbType(t *testing.T) {
	types := core.CrumbTypes()
	if len(types) != 25 {
		t.Errorf("CrumbTypes() has %d types, want 25", len(types))
	}
	seen := map[string]bool{}
	for _, typ := range types {
		if seen[typ] {
			t.Errorf("CrumbTypes() lists %q twice", typ)
		}
		seen[typ] = true
	}
	covered := map[string]bool{}
	for _, gc := range goldenCases {
		covered[gc.typ] = true
		if !seen[gc.typ] {
			t.Errorf("golden case for %q, which CrumbTypes() does not list", gc.typ)
		}
	}
	for _, typ := range types {
		if !covered[typ] {
			t.Errorf("no golden case for %q", typ)
		}
	}
	// Every golden file belongs to a type, so a stray or misnamed file fails.
	want := map[string]bool{}
	for _, typ := range types {
		want[goldenName(typ)] = true
	}
	for _, dir := range []string{goldenDir, goldenMinimalDir} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			n++
			if !want[e.Name()] {
				t.Errorf("%s/%s matches no crumb type", dir, e.Name())
			}
		}
		if n != len(types) {
			t.Errorf("%s holds %d goldens, want %d", dir, n, len(types))
		}
	}
}

func TestDecodeCrumbGoldens(t *testing.T) {
	for _, gc := range goldenCases {
		for _, variant := range []struct {
			dir   string
			check goldenCheck
		}{{goldenDir, gc.full}, {goldenMinimalDir, gc.minimal}} {
			path := filepath.Join(variant.dir, goldenName(gc.typ))
			t.Run(path, func(t *testing.T) {
				golden := readFile(t, path)
				c, err := core.DecodeCrumb(golden)
				if err != nil {
					t.Fatalf("DecodeCrumb: %v", err)
				}
				if got, want := reflect.TypeOf(c), reflect.TypeOf(gc.goType); got != want {
					t.Fatalf("decoded %v, want %v", got, want)
				}
				eq(t, "CrumbType()", c.CrumbType(), gc.typ)
				if c.Base() == nil {
					t.Fatal("Base() is nil")
				}
				variant.check(t, c)

				out, err := json.Marshal(c)
				if err != nil {
					t.Fatalf("Marshal: %v", err)
				}
				// Semantic equality with the hand-written golden: the same
				// fields (optional ones absent in the minimal golden stay
				// absent) with numbers spelled the same.
				assertJSONEqual(t, out, golden)
				eq(t, "first key", firstKey(t, out), "type")

				enc, err := core.EncodeCrumb(c)
				if err != nil || !bytes.Equal(enc, out) {
					t.Errorf("EncodeCrumb = %s, %v; want json.Marshal's %s", enc, err, out)
				}

				// Byte stability: decoding and re-encoding the encoding
				// changes nothing.
				again, err := core.DecodeCrumb(out)
				if err != nil {
					t.Fatalf("DecodeCrumb(re-encoded): %v", err)
				}
				out2, err := json.Marshal(again)
				if err != nil {
					t.Fatalf("Marshal(re-decoded): %v", err)
				}
				if !bytes.Equal(out, out2) {
					t.Errorf("re-encoding is not byte-stable\nfirst:  %s\nsecond: %s", out, out2)
				}

				assertPayloadsVerbatim(t, golden, out)
			})
		}
	}
}

// assertPayloadsVerbatim checks that every free-form payload of golden comes
// out of a decode/encode cycle with the same bytes (modulo whitespace and
// encoding/json's HTML escaping): key order and number spelling included.
func assertPayloadsVerbatim(t *testing.T, golden, out []byte) {
	t.Helper()
	in, got := objectFields(t, golden), objectFields(t, out)
	for _, k := range payloadKeys {
		raw, ok := in[k]
		if !ok {
			continue
		}
		var want bytes.Buffer
		json.HTMLEscape(&want, compact(t, raw))
		if !bytes.Equal(got[k], want.Bytes()) {
			t.Errorf("payload %q changed\n got: %s\nwant: %s", k, got[k], want.Bytes())
		}
	}
	if bytes.Contains(golden, []byte(bigInt)) && !bytes.Contains(out, []byte(bigInt)) {
		t.Errorf("%s lost precision on re-encode: %s", bigInt, out)
	}
}

func TestPipelineCrumbsCarryNoSession(t *testing.T) {
	for _, typ := range []string{core.TypePipelineStepStart, core.TypePipelineStepEnd} {
		for _, dir := range []string{goldenDir, goldenMinimalDir} {
			golden := readFile(t, filepath.Join(dir, goldenName(typ)))
			c, err := core.DecodeCrumb(golden)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(c)
			f := objectFields(t, out)
			if _, ok := f["sessionId"]; ok {
				t.Errorf("%s/%s: re-encoded crumb has a sessionId: %s", dir, typ, out)
			}
			for _, k := range []string{"agentId", "runId", "timestamp"} {
				if _, ok := f[k]; !ok {
					t.Errorf("%s/%s: re-encoded crumb lacks %q: %s", dir, typ, k, out)
				}
			}
		}
	}
}

// constructedCrumbs holds one crumb per type built in Go, as an emitter would
// build it: payloads are Go values, not raw JSON.
func constructedCrumbs() []core.Crumb {
	base := core.CrumbBase{AgentID: "echo", RunID: "run_1", SessionID: "sess_1", Timestamp: 1718035200000, Seq: 9}
	noSession := core.CrumbBase{AgentID: "echo", RunID: "run_1", Timestamp: 1718035200000, Seq: 9}
	be := &core.BreadError{Code: core.CodeToolError, Message: "boom", Context: map[string]any{"attempt": 1}}
	return []core.Crumb{
		&core.AgentRunStart{CrumbBase: base, Input: map[string]any{"q": "hi", "n": 1}, Skill: "greet"},
		&core.TextDelta{CrumbBase: base, Delta: "Hel"},
		&core.ReasoningDelta{CrumbBase: base, Delta: "hmm"},
		&core.FileGenerated{CrumbBase: base, URI: "s3://b/k", MimeType: "image/png", Name: "k.png"},
		&core.ToolCall{CrumbBase: base, ToolCallID: "c1", ToolName: "add", Args: map[string]any{"a": 1, "b": 2}},
		&core.ToolInputStart{CrumbBase: base, ToolCallID: "c1", ToolName: "add"},
		&core.ToolInputDelta{CrumbBase: base, ToolCallID: "c1", Delta: `{"a":`},
		&core.ToolInputEnd{CrumbBase: base, ToolCallID: "c1"},
		&core.ToolResult{CrumbBase: base, ToolCallID: "c1", ToolName: "add", Result: 3, DurationMs: 2},
		&core.ToolResultPartial{CrumbBase: base, ToolCallID: "c1", ToolName: "add", Result: []int{1, 2}},
		&core.ToolError{CrumbBase: base, ToolCallID: "c1", ToolName: "add", Error: be, DurationMs: 5},
		&core.HumanRequired{CrumbBase: base, CheckpointID: "ck1", ToolName: "ask", Schema: map[string]any{"type": "string"},
			Prompt: "Name?", Kind: core.HumanInput},
		&core.HumanResumed{CrumbBase: base, CheckpointID: "ck1", Response: "Ada", Kind: core.HumanInput},
		&core.SubagentRunStart{CrumbBase: base, ParentAgentID: "sup", SubagentID: "sub"},
		&core.SubagentRunEnd{CrumbBase: base, ParentAgentID: "sup", SubagentID: "sub", Output: "done"},
		&core.PipelineStepStart{CrumbBase: noSession, PipelineID: "p", StepIndex: 0},
		&core.PipelineStepEnd{CrumbBase: noSession, PipelineID: "p", StepIndex: 0, Output: "x"},
		&core.LoopStart{CrumbBase: base, LoopID: "l1", Pipeline: []string{"a", "b"}, MaxIterations: 3},
		&core.LoopIterationStart{CrumbBase: base, LoopID: "l1", Iteration: 1},
		&core.LoopIterationEnd{CrumbBase: base, LoopID: "l1", Iteration: 1, Output: map[string]any{"ok": true}},
		&core.LoopEnd{CrumbBase: base, LoopID: "l1", Status: core.LoopCompleted, Iterations: 1, Result: "final"},
		&core.TaskStart{CrumbBase: base, TaskRunID: "tr1", TaskID: "t", Model: core.TaskModelInfo{Provider: "openai", Model: "gpt-4o"}},
		&core.TaskEnd{CrumbBase: base, TaskRunID: "tr1", TaskID: "t", Status: core.TaskCompleted, DurationMs: 10,
			Usage: &core.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}},
		&core.AgentRunEnd{CrumbBase: base, Output: "bye", DurationMs: 100,
			Files: []core.FileOutput{{URI: "s3://b/k", MimeType: "image/png"}}},
		&core.AgentError{CrumbBase: base, Error: be},
	}
}

func TestConstructedCrumbsEncodeTypeFirst(t *testing.T) {
	crumbs := constructedCrumbs()
	if len(crumbs) != len(core.CrumbTypes()) {
		t.Fatalf("%d constructed crumbs for %d types", len(crumbs), len(core.CrumbTypes()))
	}
	for i, c := range crumbs {
		eq(t, "order", c.CrumbType(), core.CrumbTypes()[i])
		t.Run(c.CrumbType(), func(t *testing.T) {
			out, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "first key", firstKey(t, out), "type")
			var typ string
			if err := json.Unmarshal(objectFields(t, out)["type"], &typ); err != nil {
				t.Fatal(err)
			}
			eq(t, "type", typ, c.CrumbType())
			keys := topLevelKeys(t, out)
			slices.Sort(keys)
			if len(slices.Compact(keys)) != len(topLevelKeys(t, out)) {
				t.Errorf("a key is written twice: %s", out)
			}

			// The value (not only the pointer) encodes the same way, so a
			// crumb stored by value in a struct or map keeps its type.
			byValue, err := json.Marshal(reflect.ValueOf(c).Elem().Interface())
			if err != nil || !bytes.Equal(byValue, out) {
				t.Errorf("by value: %s, %v; want %s", byValue, err, out)
			}

			back, err := core.DecodeCrumb(out)
			if err != nil {
				t.Fatalf("DecodeCrumb: %v", err)
			}
			if reflect.TypeOf(back) != reflect.TypeOf(c) {
				t.Fatalf("decoded %T, want %T", back, c)
			}
			out2, _ := json.Marshal(back)
			if !bytes.Equal(out, out2) {
				t.Errorf("round trip changed the encoding\nfirst:  %s\nsecond: %s", out, out2)
			}
		})
	}
}

func TestFileOutputWireShape(t *testing.T) {
	cases := []struct {
		in   core.FileOutput
		want string
	}{
		{core.FileOutput{URI: "s3://b/k", MimeType: "image/png", Name: "k.png"},
			`{"kind":"file","uri":"s3://b/k","mimeType":"image/png","name":"k.png"}`},
		{core.FileOutput{URI: "s3://b/k"}, `{"kind":"file","uri":"s3://b/k"}`},
		{core.FileOutput{}, `{"kind":"file","uri":""}`},
	}
	for _, tc := range cases {
		got, err := json.Marshal(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
		var back core.FileOutput
		if err := json.Unmarshal(got, &back); err != nil || back != tc.in {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", got, back, err, tc.in)
		}
	}
}

func TestBigIntegersInPayloadsSurvive(t *testing.T) {
	// Every payload field, holding a number no float64 can represent.
	for _, tc := range []struct{ typ, field string }{
		{core.TypeAgentRunStart, "input"},
		{core.TypeAgentRunEnd, "output"},
		{core.TypeToolCall, "args"},
		{core.TypeToolResult, "result"},
		{core.TypeToolResultPartial, "result"},
		{core.TypeHumanRequired, "schema"},
		{core.TypeHumanResumed, "response"},
		{core.TypeSubagentRunEnd, "output"},
		{core.TypePipelineStepEnd, "output"},
		{core.TypeLoopIterationEnd, "output"},
		{core.TypeLoopEnd, "result"},
	} {
		for _, payload := range []string{
			bigInt,
			`-` + bigInt,
			`{"id":` + bigInt + `,"nested":[` + bigInt + `,1.10,1e400]}`,
		} {
			raw := `{"type":"` + tc.typ + `","agentId":"a","timestamp":1,"` + tc.field + `":` + payload + `}`
			c, err := core.DecodeCrumb([]byte(raw))
			if err != nil {
				t.Errorf("%s: %v", tc.typ, err)
				continue
			}
			out, err := json.Marshal(c)
			if err != nil {
				t.Errorf("%s: marshal: %v", tc.typ, err)
				continue
			}
			if got := string(objectFields(t, out)[tc.field]); got != payload {
				t.Errorf("%s.%s = %s, want %s byte for byte", tc.typ, tc.field, got, payload)
			}
		}
	}
}

func TestIsDeltaAndIsTerminal(t *testing.T) {
	for _, typ := range core.CrumbTypes() {
		wantDelta := typ == core.TypeTextDelta || typ == core.TypeReasoningDelta
		wantTerminal := typ == core.TypeAgentRunEnd || typ == core.TypeAgentError
		eq(t, "IsDelta("+typ+")", core.IsDelta(typ), wantDelta)
		eq(t, "IsTerminal("+typ+")", core.IsTerminal(typ), wantTerminal)
	}
	eq(t, "IsTerminal(human:required)", core.IsTerminal(core.TypeHumanRequired), false)
	eq(t, `IsDelta("")`, core.IsDelta(""), false)
}
