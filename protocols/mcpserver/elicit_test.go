package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpserver"
)

// publisher is an agent whose publish tool needs a human's approval; runs
// counts the tool's executions.
func publisher(runs *atomic.Int32) *core.Agent {
	a := echo()
	a.Tools = []core.Tool{{Name: "publish", Description: "Publishes.", InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`),
		Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) {
			runs.Add(1)
			return "published", nil
		}}}
	a.Permissions = core.Permissions{Ask: []string{"tool:publish"}}
	return a
}

// asker answers every elicitation with reply and keeps what it was asked.
type asker struct {
	mu    sync.Mutex
	asked []*mcp.ElicitParams
	reply func(*mcp.ElicitParams) *mcp.ElicitResult
}

func (a *asker) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	a.asked = append(a.asked, req.Params)
	a.mu.Unlock()
	return a.reply(req.Params), nil
}

func (a *asker) questions() []*mcp.ElicitParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), a.asked...)
}

// session connects over the transport named by via: "stdio", or HTTP with a
// protocol revision (2025-11-25 asks inline on a stateful session,
// 2026-07-28 through an input_required result the client retries).
func (s *stack) session(t *testing.T, via string, opts *mcp.ClientOptions) *mcp.ClientSession {
	if via == "stdio" {
		return stdioSession(t, s.plugin, opts)
	}
	return s.connect(t, via, opts, nil)
}

var transports = []string{"2025-11-25", "2026-07-28", "stdio"}

// A tool call whose run needs an approval asks the client, and the run's
// result comes back in the same tools/call: accept runs the tool, decline
// denies it (the model is told), cancel cancels the run. Run on every store:
// the checkpoint is resumed from it.
func TestElicitationAnswersApproval(t *testing.T) {
	cases := []struct {
		action    string
		approved  bool
		wantRuns  int32
		wantError string
	}{
		{action: "accept", approved: true, wantRuns: 1},
		{action: "accept", approved: false, wantRuns: 0},
		{action: "decline", wantRuns: 0},
		{action: "cancel", wantRuns: 0, wantError: "RUN_CANCELLED"},
	}
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		for _, via := range transports {
			for _, c := range cases {
				name := c.action
				if c.action == "accept" && !c.approved {
					name = "accept-no"
				}
				t.Run(via+"/"+name, func(t *testing.T) {
					var runs atomic.Int32
					model := modeltest.New(modeltest.ToolCall("tool_publish", map[string]any{"title": "Rye"}), modeltest.Text("done"))
					st := newStack(t, setup{store: open(t), model: model, agents: []*core.Agent{publisher(&runs)}, opts: mcpserver.Options{Agents: []string{"echo"}}})
					ask := &asker{reply: func(*mcp.ElicitParams) *mcp.ElicitResult {
						if c.action != "accept" {
							return &mcp.ElicitResult{Action: c.action}
						}
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved": c.approved, "reason": "because"}}
					}}
					cs := st.session(t, via, &mcp.ClientOptions{ElicitationHandler: ask.handler})
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}})
					if err != nil {
						t.Fatal(err)
					}
					qs := ask.questions()
					if len(qs) != 1 || !strings.Contains(qs[0].Message, "tool_publish") || !strings.Contains(qs[0].Message, `"Rye"`) ||
						schemaOf(t, qs[0].RequestedSchema) != `{"properties":{"approved":{"default":false,"description":"Allow this call","title":"Approve","type":"boolean"},"reason":{"description":"Why (optional)","title":"Reason","type":"string"}},"required":["approved"],"type":"object"}` {
						t.Fatalf("asked %d: %+v", len(qs), qs)
					}
					if got := runs.Load(); got != c.wantRuns {
						t.Errorf("the tool ran %d times, want %d", got, c.wantRuns)
					}
					if c.wantError != "" {
						if !res.IsError || !strings.HasPrefix(text(res), c.wantError) {
							t.Fatalf("result %+v", res)
						}
						run, _ := res.Meta["bread/runId"].(string)
						eventually(t, "the run's record to say cancelled", func() bool {
							rec, err := st.in.Storage().GetRun(t.Context(), run)
							return err == nil && rec.Status == core.RunCancelled
						})
						return
					}
					if res.IsError || text(res) != "done" {
						t.Fatalf("result %+v", res)
					}
					// What the model was told of the call.
					reqs := model.Requests()
					last := reqs[len(reqs)-1].Messages
					got := string(last[len(last)-1].Parts[0].Output)
					if want := map[bool]string{true: "published", false: "denied"}[c.wantRuns == 1]; !strings.Contains(got, want) {
						t.Errorf("the model was told %s, want %s", got, want)
					}
				})
			}
		}
	})
}

// A client without the elicitation capability, and a 2025-11-25 request
// without a session (nothing can carry a request to the client), get the
// suspended result naming the checkpoint, as before.
func TestNoElicitationKeepsTheCheckpoint(t *testing.T) {
	for _, via := range append(transports, "stateless") {
		t.Run(via, func(t *testing.T) {
			var runs atomic.Int32
			model := modeltest.New(modeltest.ToolCall("tool_publish", map[string]any{}), modeltest.Text("done"))
			opts := mcpserver.Options{Agents: []string{"echo"}}
			var clientOpts *mcp.ClientOptions
			version := via
			if via == "stateless" {
				opts.Stateless = true
				version = "2025-11-25"
				ask := &asker{reply: func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "accept"} }}
				clientOpts = &mcp.ClientOptions{ElicitationHandler: ask.handler}
			}
			st := newStack(t, setup{model: model, agents: []*core.Agent{publisher(&runs)}, opts: opts})
			cs := st.session(t, version, clientOpts)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}})
			if err != nil {
				t.Fatal(err)
			}
			if cp, _ := res.Meta["bread/checkpointId"].(string); !res.IsError || cp == "" || !strings.Contains(text(res), "waiting for a human's approval") {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

// A human tool's answer schema becomes the form (its model-proposed values
// the defaults); a primitive one is asked as one "answer" property; one a
// form cannot hold leaves the run suspended.
func TestElicitationAsksHumanInput(t *testing.T) {
	cases := []struct {
		name, schema, args string
		reply              map[string]any
		wantSchema         string
		wantAnswer         string // "" : the run stays suspended
	}{
		{
			name:       "object",
			schema:     `{"type":"object","properties":{"city":{"type":"string","minLength":2,"pattern":"^[A-Z]"},"nights":{"type":"integer","minimum":1}},"required":["city"]}`,
			args:       `{"city":"Turin"}`,
			reply:      map[string]any{"city": "Milan", "nights": 2},
			wantSchema: `{"properties":{"city":{"default":"Turin","minLength":2,"type":"string"},"nights":{"minimum":1,"type":"integer"}},"required":["city"],"type":"object"}`,
			wantAnswer: `{"city":"Milan","nights":2}`,
		},
		{
			name:       "enum",
			schema:     `{"type":"string","enum":["rye","spelt"]}`,
			args:       `"spelt"`,
			reply:      map[string]any{"answer": "rye"},
			wantSchema: `{"properties":{"answer":{"default":"spelt","enum":["rye","spelt"],"title":"Answer","type":"string"}},"required":["answer"],"type":"object"}`,
			wantAnswer: `"rye"`,
		},
		{
			name:   "nested",
			schema: `{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"}}}}}`,
			args:   `{}`,
		},
	}
	for _, via := range []string{"2025-11-25", "2026-07-28"} {
		for _, c := range cases {
			t.Run(via+"/"+c.name, func(t *testing.T) {
				a := echo()
				a.HumanTools = []core.HumanToolDef{{Name: "ask", Description: "Ask the traveller.", Prompt: "Where to?", Schema: json.RawMessage(c.schema)}}
				var args any
				_ = json.Unmarshal([]byte(c.args), &args)
				model := modeltest.New(modeltest.ToolCall("human_ask", args), modeltest.Text("booked"))
				st := newStack(t, setup{model: model, agents: []*core.Agent{a}, opts: mcpserver.Options{Agents: []string{"echo"}}})
				ask := &asker{reply: func(*mcp.ElicitParams) *mcp.ElicitResult {
					return &mcp.ElicitResult{Action: "accept", Content: c.reply}
				}}
				cs := st.session(t, via, &mcp.ClientOptions{ElicitationHandler: ask.handler})
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}})
				if err != nil {
					t.Fatal(err)
				}
				qs := ask.questions()
				if c.wantAnswer == "" {
					if len(qs) != 0 || !res.IsError || res.Meta["bread/checkpointId"] == nil {
						t.Fatalf("asked %d, result %+v", len(qs), res)
					}
					return
				}
				if len(qs) != 1 || qs[0].Message != "Where to?" || !jsonEq(t, schemaOf(t, qs[0].RequestedSchema), c.wantSchema) {
					t.Fatalf("asked %d: %+v %s", len(qs), qs, schemaOf(t, qs[0].RequestedSchema))
				}
				if res.IsError || text(res) != "booked" {
					t.Fatalf("result %+v", res)
				}
				reqs := model.Requests()
				last := reqs[len(reqs)-1].Messages
				if got := string(last[len(last)-1].Parts[0].Output); !jsonEq(t, got, c.wantAnswer) {
					t.Errorf("the model got %s, want %s", got, c.wantAnswer)
				}
			})
		}
	}
}

// A retry's requestState is not trusted: one this server did not issue is
// refused, and a checkpoint already answered is not found.
func TestRoundTripStateChecked(t *testing.T) {
	var runs atomic.Int32
	model := modeltest.New(modeltest.ToolCall("tool_publish", map[string]any{}), modeltest.Text("done"))
	st := newStack(t, setup{model: model, agents: []*core.Agent{publisher(&runs)}, opts: mcpserver.Options{Agents: []string{"echo"}}})
	cs := st.connect(t, "2026-07-28", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}, nil)
	first, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || len(first.InputRequests) != 1 || first.RequestState == "" {
		t.Fatalf("first result %+v", first)
	}
	var cp string
	for id := range first.InputRequests {
		cp = id
	}
	yes := mcp.InputResponseMap{cp: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}}
	forged, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}, InputResponses: yes, RequestState: "bm90LW91cnM"})
	if err != nil {
		t.Fatal(err)
	}
	if !forged.IsError || !strings.HasPrefix(text(forged), "VALIDATION_ERROR") {
		t.Errorf("forged state: %+v", forged)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}, InputResponses: yes, RequestState: first.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || text(res) != "done" || runs.Load() != 1 {
		t.Fatalf("retry %+v (ran %d)", res, runs.Load())
	}
	again, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}, InputResponses: yes, RequestState: first.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if !again.IsError || !strings.HasPrefix(text(again), "CHECKPOINT_NOT_FOUND") || runs.Load() != 1 {
		t.Fatalf("second retry %+v (ran %d)", again, runs.Load())
	}
}
