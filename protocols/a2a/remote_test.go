package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	a2ap "github.com/breadai/bread/protocols/a2a"
)

// executor is an a2a-go agent: it answers with the text it got, in two
// artifact chunks, or fails when the text says "fail", or asks for input
// when it says "ask".
type executor struct {
	seen     chan *a2a.Message
	canceled chan a2a.TaskID
}

func (e executor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if e.seen != nil {
		e.seen <- rc.Message
	}
	// A status update, not the task itself: a2a-go's task manager mutates
	// a written *a2a.Task while its JSON-RPC handler encodes it (a data
	// race in a2a-go v0.3.3's server, not in the client under test).
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateSubmitted, nil)); err != nil {
		return err
	}
	var text string
	for _, p := range rc.Message.Parts {
		switch v := p.(type) {
		case a2a.TextPart:
			text += v.Text
		case a2a.DataPart:
			b, _ := json.Marshal(v.Data)
			text += string(b)
		}
	}
	switch text {
	case "hang":
		if err := q.Write(ctx, a2a.NewArtifactEvent(rc, a2a.TextPart{Text: "started"})); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	case "fail":
		return q.Write(ctx, finalStatus(rc, a2a.TaskStateFailed, "it broke"))
	case "ask":
		return q.Write(ctx, finalStatus(rc, a2a.TaskStateInputRequired, "which one?"))
	}
	first := a2a.NewArtifactEvent(rc, a2a.TextPart{Text: "echo: "})
	if err := q.Write(ctx, first); err != nil {
		return err
	}
	second := a2a.NewArtifactUpdateEvent(rc, first.Artifact.ID, a2a.TextPart{Text: text})
	if err := q.Write(ctx, second); err != nil {
		return err
	}
	return q.Write(ctx, finalStatus(rc, a2a.TaskStateCompleted, ""))
}

func finalStatus(rc *a2asrv.RequestContext, state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	var msg *a2a.Message
	if text != "" {
		msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: text})
	}
	ev := a2a.NewStatusUpdateEvent(rc, state, msg)
	ev.Final = true
	return ev
}

func (e executor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if e.canceled != nil {
		e.canceled <- rc.TaskID
	}
	return q.Write(ctx, finalStatus(rc, a2a.TaskStateCanceled, ""))
}

// a2aGoServer serves executor with a2a-go's own server plumbing.
func a2aGoServer(t *testing.T, e executor, header *string) string {
	t.Helper()
	mux := http.NewServeMux()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if header != nil && r.Header.Get("X-Key") != *header {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	card := &a2a.AgentCard{Name: "echo", Description: "Echoes.", URL: hs.URL + "/rpc", PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion: "0.3.0", Version: "1", Capabilities: a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}, Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "Echoes.", Tags: []string{}}}}
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/rpc", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(e)))
	return hs.URL
}

func runRemote(t *testing.T, remote core.RemoteAgent, input any) ([]core.Crumb, error) {
	return runRemoteOn(t, remote, input, core.RunOptions{})
}

func runRemoteOn(t *testing.T, remote core.RemoteAgent, input any, opts core.RunOptions) ([]core.Crumb, error) {
	t.Helper()
	in, err := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{scripted("local", modeltest.Text("x"))}, RemoteAgents: map[string]core.RemoteAgent{"helper": remote}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	var out []core.Crumb
	for c, err := range in.Run(t.Context(), "helper", input, opts) {
		if c != nil {
			out = append(out, c)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func crumbTypes(cs []core.Crumb) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.CrumbType()
	}
	return strings.Join(s, " ")
}

func TestRemoteAgentAgainstA2AGoServer(t *testing.T) {
	seen := make(chan *a2a.Message, 4)
	key := "k1"
	base := a2aGoServer(t, executor{seen: seen}, &key)
	remote, err := a2ap.NewRemote(a2ap.RemoteOptions{URL: base, Headers: http.Header{"X-Key": {"k1"}}})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := runRemote(t, remote, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if got := crumbTypes(cs); got != "agent:run:start text:delta text:delta agent:run:end" {
		t.Fatalf("crumbs = %s", got)
	}
	end := cs[len(cs)-1].(*core.AgentRunEnd)
	if end.Output != "echo: hello" || cs[0].Base().RunID == "" {
		t.Fatalf("end = %+v", end)
	}
	if m := <-seen; m.Parts[0].(a2a.TextPart).Text != "hello" {
		t.Fatalf("the remote got %+v", m.Parts)
	}
	// An object input is a data part.
	if _, err := runRemote(t, remote, map[string]any{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if m := <-seen; m.Parts[0].(a2a.DataPart).Data["n"] != float64(1) || m.ContextID != "" {
		t.Fatalf("the remote got %+v", m)
	}
	// A session id goes as the context id.
	if _, err := runRemoteOn(t, remote, "again", core.RunOptions{Session: core.SessionOptions{ID: "chat-7"}}); err != nil {
		t.Fatal(err)
	}
	if m := <-seen; m.ContextID != "chat-7" {
		t.Fatalf("the remote got context %q", m.ContextID)
	}
	// A failed task, and one that asks for input, are REMOTE_AGENT_ERROR.
	for input, want := range map[string]string{"fail": "it broke", "ask": "asks for input"} {
		_, err := runRemote(t, remote, input)
		if !isCode(err, core.CodeRemoteAgentError) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want REMOTE_AGENT_ERROR with %q", input, err, want)
		}
	}
	// The card's own URL works too; a wrong key fails with the card.
	remote, _ = a2ap.NewRemote(a2ap.RemoteOptions{URL: base + "/.well-known/agent-card.json"})
	if _, err := runRemote(t, remote, "x"); !isCode(err, core.CodeRemoteAgentError) || !strings.Contains(err.Error(), "Agent Card") {
		t.Fatalf("no key: %v", err)
	}
	if _, err := a2ap.NewRemote(a2ap.RemoteOptions{URL: "/relative"}); !isCode(err, core.CodeInvalidConfig) {
		t.Fatalf("relative url: %v", err)
	}
}

// TestBreadToBreadOverA2A: a bread agent served by this plugin, used as a
// remote agent by another bread, over A2A.
func TestBreadToBreadOverA2A(t *testing.T) {
	s := newStack(t, setup{agents: []*core.Agent{scripted("assistant", modeltest.Text("Hel", "lo"))}})
	remote, err := a2ap.NewRemote(a2ap.RemoteOptions{URL: s.url})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := runRemote(t, remote, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if end := cs[len(cs)-1].(*core.AgentRunEnd); end.Output != "Hello" {
		t.Fatalf("crumbs %s, end %+v", crumbTypes(cs), end)
	}
}

// TestRemoteCancelSendsTasksCancel: a relayed run that is cancelled asks
// the remote agent to cancel its task.
func TestRemoteCancelSendsTasksCancel(t *testing.T) {
	canceled := make(chan a2a.TaskID, 1)
	base := a2aGoServer(t, executor{canceled: canceled}, nil)
	remote, err := a2ap.NewRemote(a2ap.RemoteOptions{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var runID string
	for c, err := range remote.Run(ctx, "helper", "hang", core.RunOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if c.CrumbType() == core.TypeTextDelta {
			runID = c.Base().RunID
			cancel()
		}
	}
	select {
	case id := <-canceled:
		if string(id) != runID {
			t.Fatalf("cancelled %s, want %s", id, runID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the remote task was not cancelled")
	}
}
