package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpserver"
	"github.com/breadai/bread/server"
)

// Each exposed agent and skill is a prompt (instructions, then the input
// built from arguments of its input schema), skills are resources, a
// call's result links its session's transcript, which reads back from the
// store and notifies its subscribers; completion offers enum values and
// the caller's sessions; another identity reads no transcript of others.
func TestPromptsResourcesAndCompletion(t *testing.T) {
	w := writer()
	w.Prompt = "You write titles."
	w.Documents = &core.DocumentConfig{}
	w.InputSchema = json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","description":"What about","enum":["rye","spelt"]},"count":{"type":"integer"}},"required":["topic"]}`)
	st := newStack(t, setup{model: modeltest.New(modeltest.JSON(map[string]any{"title": "Rye"})), agents: []*core.Agent{w},
		opts: mcpserver.Options{Agents: []string{"writer"}, Skills: []mcpserver.SkillRef{{Agent: "writer", Skill: "deep"}}},
		auth: &server.Auth{Strategies: []core.BreadAuthStrategy{keyAuth{}}, Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }}})
	st.in.Storage().OwnSessions(core.SessionOwners{})
	updated := make(chan string, 8)
	cs := st.connect(t, "2025-11-25", &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI }},
		map[string][]string{"Authorization": {"Bearer good"}})
	ctx := t.Context()

	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 2 {
		t.Fatalf("prompts %v %v", err, lp)
	}
	if got := schemaOf(t, lp.Prompts[0].Arguments); lp.Prompts[0].Name != "writer" || got != `[{"name":"count"},{"name":"topic","description":"What about","required":true}]` {
		t.Errorf("writer prompt %s %s", lp.Prompts[0].Name, got)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "writer__deep", Arguments: map[string]string{"topic": "rye", "count": "3"}})
	if err != nil || len(gp.Messages) != 2 || gp.Messages[0].Content.(*mcp.TextContent).Text != "You write titles.\n\nThink." || gp.Messages[1].Content.(*mcp.TextContent).Text != `{"count":3,"topic":"rye"}` {
		t.Fatalf("prompt %v %s", err, schemaOf(t, gp))
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "writer"}, Argument: mcp.CompleteParamsArgument{Name: "topic", Value: "r"}})
	if err != nil || strings.Join(comp.Completion.Values, ",") != "rye" {
		t.Errorf("completion %v %+v", err, comp)
	}

	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "bread://agents/writer/skills/deep"})
	if err != nil || res.Contents[0].Text != "Think." {
		t.Errorf("skill resource %v %+v", err, res)
	}

	// An agent's documents read as resources, their ids completed.
	doc, err := st.in.Storage().IngestDocument(ctx, core.NewDocument{AgentID: "writer", Title: "Rye notes", Content: "Rye is a grass."})
	if err != nil {
		t.Fatal(err)
	}
	dr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "bread://agents/writer/documents/" + doc.ID})
	if err != nil || dr.Contents[0].Text != "Rye is a grass." {
		t.Errorf("document %v %+v", err, dr)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "bread://agents/nobody/documents/" + doc.ID}); err == nil {
		t.Error("a document of an agent not exposed was read")
	}
	comp, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "bread://agents/{agentId}/documents/{documentId}"},
		Argument: mcp.CompleteParamsArgument{Name: "documentId", Value: doc.ID[:3]}, Context: &mcp.CompleteContext{Arguments: map[string]string{"agentId": "writer"}}})
	if err != nil || len(comp.Completion.Values) != 1 || comp.Completion.Values[0] != doc.ID {
		t.Errorf("document completion %v %+v", err, comp)
	}

	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "writer", Arguments: map[string]any{"topic": "rye"}})
	if err != nil || call.IsError {
		t.Fatalf("call %v %+v", err, call)
	}
	var transcript string
	for _, c := range call.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && strings.HasSuffix(l.URI, "/transcript") {
			transcript = l.URI
		}
	}
	if transcript == "" {
		t.Fatalf("no transcript link in %s", schemaOf(t, call.Content))
	}
	tr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: transcript})
	if err != nil || !strings.Contains(tr.Contents[0].Text, `"role":"user"`) || !strings.Contains(tr.Contents[0].Text, "Rye") {
		t.Fatalf("transcript %v %+v", err, tr)
	}
	sid := strings.TrimSuffix(strings.TrimPrefix(transcript, "bread://sessions/"), "/transcript")
	comp, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "bread://sessions/{sessionId}/transcript"}, Argument: mcp.CompleteParamsArgument{Name: "sessionId", Value: sid[:4]}})
	if err != nil || len(comp.Completion.Values) != 1 || comp.Completion.Values[0] != sid {
		t.Errorf("session completion %v %+v", err, comp)
	}

	// Another identity neither reads nor subscribes to it.
	other := st.connect(t, "2025-11-25", nil, map[string][]string{"Authorization": {"Bearer other"}})
	if _, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: transcript}); err == nil {
		t.Error("another identity read the transcript")
	}
	if err := other.Subscribe(ctx, &mcp.SubscribeParams{URI: transcript}); err == nil {
		t.Error("another identity subscribed to the transcript")
	}

	// A run in the session notifies its subscribers.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: transcript}); err != nil {
		t.Fatal(err)
	}
	for c, err := range st.in.Run(core.WithIdentity(ctx, &core.AuthIdentity{Subject: "good"}), "writer", map[string]any{"topic": "spelt"}, core.RunOptions{Session: core.SessionOptions{ID: sid}}) {
		if err != nil || c == nil {
			t.Fatalf("run in the session: %v", err)
		}
	}
	if got := <-updated; got != transcript {
		t.Errorf("updated %s", got)
	}
}
