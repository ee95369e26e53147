package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// The resource URIs bread serves.
const (
	// transcriptTemplate is a bread session's messages, as JSON.
	transcriptTemplate = "bread://sessions/{sessionId}/transcript"
	transcriptPrefix   = "bread://sessions/"
	transcriptSuffix   = "/transcript"
	// documentTemplate is a document an agent ingested (core_doc_*).
	documentTemplate = "bread://agents/{agentId}/documents/{documentId}"
)

// transcriptURI names a session's transcript resource.
func transcriptURI(sessionID string) string {
	return transcriptPrefix + sessionID + transcriptSuffix
}

// skillURI names an agent's skill resource.
func skillURI(agentID, skill string) string {
	return "bread://agents/" + agentID + "/skills/" + skill
}

// resources builds the skills of the exposed agents (static, their
// SKILL.md body, by URI) and the templates (by URI template): transcripts,
// and documents when an exposed agent has them.
func (p *Plugin) resources(agents []*core.Agent) (static, templates map[string]exposedResource) {
	static, templates = map[string]exposedResource{}, map[string]exposedResource{}
	for _, a := range agents {
		for _, sk := range a.Skills {
			text := sk.Instructions
			r := &mcp.Resource{URI: skillURI(a.ID, sk.ID), Name: a.ID + "/" + sk.ID, Title: cmpOr(sk.Name, sk.ID), Description: cmpOr(sk.Description, "A skill of the bread agent "+a.ID+"."), MIMEType: "text/markdown"}
			static[r.URI] = exposedResource{resource: r, handler: func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}}, nil
			}}
		}
	}
	p.documentAgents = map[string]bool{}
	for _, a := range agents {
		if a.Documents != nil {
			p.documentAgents[a.ID] = true
		}
	}
	template := func(t *mcp.ResourceTemplate, h mcp.ResourceHandler) {
		templates[t.URITemplate] = exposedResource{template: t, handler: h}
	}
	if len(p.documentAgents) > 0 {
		template(&mcp.ResourceTemplate{URITemplate: documentTemplate, Name: "document", Title: "Agent document",
			Description: "A document an exposed agent ingested (its core_doc_* tools), as text.", MIMEType: "text/plain"}, p.readDocument)
	}
	if p.rt.Blobs().Configured() {
		template(&mcp.ResourceTemplate{URITemplate: fileTemplate, Name: "file", Title: "Generated file",
			Description: "A file a run generated (a tool call's result links its own), read from the blob store.", MIMEType: "application/octet-stream"}, p.readFile)
	}
	template(&mcp.ResourceTemplate{URITemplate: transcriptTemplate, Name: "transcript", Title: "Session transcript",
		Description: "The messages of a bread session (a tool call's result links its own), as JSON.", MIMEType: "application/json"}, p.readTranscript)
	return static, templates
}

// readTranscript reads a session's messages from the store, under the
// session ownership rule (another identity's session is not found).
func (p *Plugin) readTranscript(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, ok := transcriptSession(req.Params.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	if _, err := p.rt.Storage().GetSession(ctx, id); err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	msgs, err := p.rt.Storage().GetMessages(ctx, id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	if msgs == nil {
		msgs = []core.SessionMessage{}
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
}

// readDocument reads a document of an exposed agent that has documents.
func (p *Plugin) readDocument(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rest, _ := strings.CutPrefix(req.Params.URI, "bread://agents/")
	agentID, docID, ok := strings.Cut(rest, "/documents/")
	if !ok || !p.documentAgents[agentID] || docID == "" || strings.Contains(docID, "/") {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	d, err := p.rt.Storage().ReadDocument(ctx, agentID, docID)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: d.Content}}}, nil
}

func transcriptSession(uri string) (string, bool) {
	id, ok := strings.CutPrefix(uri, transcriptPrefix)
	if !ok {
		return "", false
	}
	id, ok = strings.CutSuffix(id, transcriptSuffix)
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// watched counts the subscriptions to each transcript, so that the crumb
// listener tells the SDK of an update only when someone listens.
type watched struct {
	mu sync.Mutex
	n  map[string]int
}

func (w *watched) add(uri string, d int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[string]int{}
	}
	w.n[uri] += d
	if w.n[uri] <= 0 {
		delete(w.n, uri)
	}
}

func (w *watched) has(uri string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[uri] > 0
}

// subscribe accepts resources/subscribe for a transcript the caller may
// read (and, for the resources of a Go caller's own, any other URI).
func (p *Plugin) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	if id, ok := transcriptSession(req.Params.URI); ok {
		if _, err := p.rt.Storage().GetSession(ctx, id); err != nil {
			return mcp.ResourceNotFoundError(req.Params.URI)
		}
	}
	p.ep.watched.add(req.Params.URI, 1)
	return nil
}

// transcriptChanged is the crumb listener: a crumb after which a session's
// messages changed (a tool's result, a run's end or suspension) sends
// notifications/resources/updated to the transcript's subscribers. It runs
// on the run's goroutine, so the notification goes out on its own.
func (p *Plugin) transcriptChanged(_ context.Context, c core.Crumb) {
	switch c.(type) {
	case *core.ToolResult, *core.AgentRunEnd, *core.HumanRequired, *core.AgentError:
	default:
		return
	}
	uri := transcriptURI(c.Base().SessionID)
	if c.Base().SessionID == "" || !p.ep.watched.has(uri) {
		return
	}
	s := p.Server()
	go func() { _ = s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}) }()
}

// complete answers completion/complete: a prompt argument's enum values,
// and a transcript's session ids (the caller's sessions), that start with
// what was typed.
func (p *Plugin) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var values []string
	prefix := req.Params.Argument.Value
	switch ref := req.Params.Ref; {
	case ref == nil:
	case ref.Type == "ref/prompt":
		if enum, ok := p.promptEnums[ref.Name][req.Params.Argument.Name]; ok {
			values = enum
		}
	case ref.Type == "ref/resource" && ref.URI == documentTemplate && req.Params.Argument.Name == "agentId":
		for id := range p.documentAgents {
			values = append(values, id)
		}
		slices.Sort(values)
	case ref.Type == "ref/resource" && ref.URI == documentTemplate && req.Params.Argument.Name == "documentId":
		agentID := ""
		if req.Params.Context != nil {
			agentID = req.Params.Context.Arguments["agentId"]
		}
		if p.documentAgents[agentID] {
			docs, err := p.rt.Storage().SearchDocuments(ctx, core.DocumentQuery{AgentID: agentID, Limit: 100})
			if err == nil {
				for _, d := range docs {
					values = append(values, d.ID)
				}
			}
		}
	case ref.Type == "ref/resource" && ref.URI == transcriptTemplate && req.Params.Argument.Name == "sessionId":
		sessions, err := p.rt.Storage().ListSessions(ctx, core.SessionFilter{})
		if err == nil {
			for _, s := range sessions {
				values = append(values, s.ID)
			}
		}
	}
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	total := len(out)
	more := false
	if len(out) > 100 {
		out, more = out[:100], true
	}
	if out == nil {
		out = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: total, HasMore: more}}, nil
}

// enumsOf lists the string enum of each top-level property of an object
// schema, for completion.
func enumsOf(s json.RawMessage) map[string][]string {
	props, _ := schemaProperties(s)
	out := map[string][]string{}
	for k, prop := range props {
		list, _ := prop["enum"].([]any)
		for _, v := range list {
			if s, ok := v.(string); ok {
				out[k] = append(out[k], s)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
