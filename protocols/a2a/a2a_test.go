package a2a_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/engine"
	a2ap "github.com/breadai/bread/protocols/a2a"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/stores/teststores"
)

type stack struct {
	in     *engine.Instance
	url    string
	client *a2aclient.Client
	card   *a2a.AgentCard
}

type setup struct {
	store core.BreadStore // nil: a memory store
	// maxRuns is the engine's MaxConcurrentRuns.
	maxRuns int
	opts    a2ap.Options
	agents  []*core.Agent
	blobs   core.BlobStore
	auth    *server.Auth
	// maxBody is the server's MaxBodyBytes (0: its default).
	maxBody int64
}

func scripted(id string, turns ...modeltest.Turn) *core.Agent {
	return &core.Agent{ID: id, Model: core.ModelRef{Provider: "own", Model: id}, Providers: modeltest.New(turns...).Registry("own")}
}

// newStack serves the plugin over a real socket and connects a2a-go's own
// client to it through the Agent Card.
func newStack(t *testing.T, s setup) *stack {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	if s.opts.Agent == "" {
		s.opts.Agent = "assistant"
	}
	if s.opts.URL == "" {
		s.opts.URL = base + "/a2a"
	}
	p, err := a2ap.New(s.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.store == nil {
		s.store = memory.New()
	}
	in, err := engine.New(engine.Config{Store: s.store, Bus: stream.New(stream.Options{}), Agents: s.agents, BlobStore: s.blobs, Plugins: []core.BreadPlugin{p}, MaxConcurrentRuns: s.maxRuns})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	srv, err := server.New(in, server.Options{Auth: s.auth, MaxBodyBytes: s.maxBody})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv.Handler()
	hs.Start()
	t.Cleanup(hs.Close)
	hc := hs.Client()
	if s.auth != nil {
		hc = userClient("ann")
	}
	if s.opts.SpecVersion == a2ap.SpecV1 {
		return &stack{in: in, url: base}
	}
	card, err := agentcard.NewResolver(hc).Resolve(t.Context(), base, agentcard.WithPath(p.CardPath()))
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	return &stack{in: in, url: base, client: client, card: card}
}

// eachStore runs f on the memory store, SQLite and PostgreSQL: a task read
// back (tasks/get, a resubscription, an answer) comes from the store's run
// record and crumb log, whose payloads are raw JSON on the SQL stores.
func eachStore(t *testing.T, f func(t *testing.T, open func(testing.TB) core.BreadStore)) {
	teststores.Each(t, func(t *testing.T, s teststores.Store) { f(t, s.Open) })
}

// sameTask fails unless got, a task read back, is want, a task as
// message/send answered it or a stream built it: the same id, context,
// state, status message and artifacts. Generated message ids, times and
// the history (tasks/get ignores historyLength) are not compared.
func sameTask(t *testing.T, what string, want, got *a2a.Task) {
	t.Helper()
	view := func(task *a2a.Task) string {
		v := map[string]any{"id": task.ID, "contextId": task.ContextID, "state": task.Status.State, "artifacts": task.Artifacts}
		if m := task.Status.Message; m != nil {
			v["message"] = m.Parts
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if w, g := view(want), view(got); w != g {
		t.Errorf("%s differs from the task it reads back\n got: %s\nwant: %s", what, g, w)
	}
}

// folded is the task a stream's events build, as a client accumulates
// them: the first event's task, its status replaced and its artifacts
// appended to by id.
func folded(t *testing.T, evs []a2a.Event) *a2a.Task {
	t.Helper()
	task, ok := evs[0].(*a2a.Task)
	if !ok {
		t.Fatalf("the stream starts with %T, want the task", evs[0])
	}
	out := *task
	for _, ev := range evs[1:] {
		switch v := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			out.Status = v.Status
		case *a2a.TaskArtifactUpdateEvent:
			i := slices.IndexFunc(out.Artifacts, func(a *a2a.Artifact) bool { return a.ID == v.Artifact.ID })
			if i < 0 {
				cp := *v.Artifact
				out.Artifacts = append(out.Artifacts, &cp)
				continue
			}
			cp := *out.Artifacts[i]
			if !v.Append {
				cp.Parts = nil
			}
			for _, p := range v.Artifact.Parts {
				if tp, ok := p.(a2a.TextPart); ok && len(cp.Parts) > 0 {
					if last, ok := cp.Parts[len(cp.Parts)-1].(a2a.TextPart); ok {
						cp.Parts = append(slices.Clone(cp.Parts[:len(cp.Parts)-1]), a2a.TextPart{Text: last.Text + tp.Text})
						continue
					}
				}
				cp.Parts = append(slices.Clone(cp.Parts), p)
			}
			out.Artifacts[i] = &cp
		}
	}
	return &out
}

// readBack is tasks/get of task, which must equal it.
func readBack(t *testing.T, s *stack, what string, task *a2a.Task) *a2a.Task {
	t.Helper()
	got, err := s.client.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatalf("%s: tasks/get: %v", what, err)
	}
	sameTask(t, what, task, got)
	return got
}

func textMessage(text string) *a2a.MessageSendParams {
	return &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})}
}

// artifactText is the text of a task's artifacts, in order.
func artifactText(t *a2a.Task) string {
	var b strings.Builder
	for _, a := range t.Artifacts {
		for _, p := range a.Parts {
			if tp, ok := p.(a2a.TextPart); ok {
				b.WriteString(tp.Text)
			}
		}
	}
	return b.String()
}

// kinds names a stream's events: task:<state>, artifact:<text>, status:<state>[:final].
func kinds(evs []a2a.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		switch v := ev.(type) {
		case *a2a.Task:
			out[i] = "task:" + string(v.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			var s string
			for _, p := range v.Artifact.Parts {
				switch pv := p.(type) {
				case a2a.TextPart:
					s += pv.Text
				case a2a.FilePart:
					s += "file:" + pv.File.(a2a.FileURI).MimeType
				case a2a.DataPart:
					b, _ := json.Marshal(pv.Data)
					s += string(b)
				}
			}
			out[i] = "artifact:" + s
		case *a2a.TaskStatusUpdateEvent:
			out[i] = "status:" + string(v.Status.State)
			if v.Final {
				out[i] += ":final"
			}
		case *a2a.Message:
			out[i] = "message"
		}
	}
	return out
}

func collect(t *testing.T, seq func(func(a2a.Event, error) bool)) ([]a2a.Event, error) {
	t.Helper()
	var evs []a2a.Event
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func TestCard(t *testing.T) {
	a := scripted("assistant", modeltest.Text("hi"))
	a.Description = "Answers questions."
	a.InputSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	a.Skills = []core.Skill{{ID: "search", Name: "Search", Description: "Finds things."}}
	s := newStack(t, setup{agents: []*core.Agent{a}})
	c := s.card
	if c.Name != "assistant" || c.Description != "Answers questions." || c.URL != s.url+"/a2a" || c.ProtocolVersion != "0.3.0" ||
		!c.Capabilities.Streaming || c.Capabilities.PushNotifications || c.PreferredTransport != a2a.TransportProtocolJSONRPC {
		t.Fatalf("card = %+v", c)
	}
	if len(c.Skills) != 1 || c.Skills[0].ID != "search" || c.Skills[0].Description != "Finds things." {
		t.Fatalf("skills = %+v", c.Skills)
	}
	if len(c.Capabilities.Extensions) != 1 || c.Capabilities.Extensions[0].URI != a2ap.SchemaExtensionURI || c.Capabilities.Extensions[0].Params["inputSchema"] == nil {
		t.Fatalf("extensions = %+v", c.Capabilities.Extensions)
	}
	if strings.Join(c.DefaultInputModes, ",") != "text/plain,application/json" {
		t.Fatalf("input modes = %v", c.DefaultInputModes)
	}
	// Without a description, the first line of the prompt; a URL given as
	// a path is advertised on the host the card was asked from.
	b := scripted("assistant", modeltest.Text("hi"))
	b.Prompt = "# Weather bot\n\nYou answer about the weather."
	s = newStack(t, setup{agents: []*core.Agent{b}, opts: a2ap.Options{URL: "/rpc", CardPath: "/cards/weather.json"}})
	if s.card.Description != "Weather bot" || s.card.URL != s.url+"/rpc" || len(s.card.Skills) != 1 || s.card.Skills[0].ID != "assistant" {
		t.Fatalf("card = %+v", s.card)
	}
	if _, err := s.client.SendMessage(t.Context(), textMessage("hi")); err != nil {
		t.Fatal(err)
	}
}

func TestSendText(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{scripted("assistant", modeltest.Text("Hel", "lo"))}})
		res, err := s.client.SendMessage(t.Context(), textMessage("hi"))
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("result %T, want a task", res)
		}
		if task.Status.State != a2a.TaskStateCompleted || artifactText(task) != "Hello" || task.ContextID == "" || task.ID == "" {
			t.Fatalf("task = %+v, text %q", task, artifactText(task))
		}
		// The task is the bread run, its context the session.
		rec, err := s.in.Storage().GetRun(t.Context(), string(task.ID))
		if err != nil || rec.SessionID != task.ContextID || rec.Status != core.RunCompleted {
			t.Fatalf("run record = %+v, %v", rec, err)
		}
		readBack(t, s, "message/send", task)
		if _, err := s.client.GetTask(t.Context(), &a2a.TaskQueryParams{ID: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("unknown task: %v, want task not found", err)
		}
		// A second message on the same context continues the session.
		m := textMessage("again")
		m.Message.ContextID = task.ContextID
		res, err = s.client.SendMessage(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		if res.(*a2a.Task).ContextID != task.ContextID || res.(*a2a.Task).ID == task.ID {
			t.Fatalf("follow-up task = %+v", res)
		}
		msgs, err := s.in.Storage().GetMessages(t.Context(), task.ContextID)
		if err != nil || len(msgs) != 4 {
			t.Fatalf("session messages = %d, %v", len(msgs), err)
		}
	})
}

func TestSendDataAndFileParts(t *testing.T) {
	dir := t.TempDir()
	blobs, err := blobfs.New(blobfs.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(modeltest.Text("ok"), modeltest.Text("ok"), modeltest.Text("ok"), modeltest.Text("ok"))
	a := &core.Agent{ID: "assistant", Model: core.ModelRef{Provider: "own", Model: "m"}, Providers: model.Registry("own")}
	s := newStack(t, setup{agents: []*core.Agent{a}, blobs: blobs})
	send := func(parts ...a2a.Part) string {
		t.Helper()
		if _, err := s.client.SendMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, parts...)}); err != nil {
			t.Fatal(err)
		}
		reqs := model.Requests()
		last := reqs[len(reqs)-1].Messages
		b, _ := json.Marshal(last[len(last)-1])
		return string(b)
	}
	if got := send(a2a.DataPart{Data: map[string]any{"city": "Oslo"}}); !strings.Contains(got, `{\"city\":\"Oslo\"}`) {
		t.Errorf("data part: the model saw %s", got)
	}
	if got := send(a2a.FilePart{File: a2a.FileURI{URI: "https://example.com/a.png", FileMeta: a2a.FileMeta{MimeType: "image/png"}}}); !strings.Contains(got, `https://example.com/a.png`) || !strings.Contains(got, `image/png`) {
		t.Errorf("file part: the model saw %s", got)
	}
	if got := send(a2a.TextPart{Text: "look"}, a2a.DataPart{Data: map[string]any{"n": 1}}); !strings.Contains(got, `[{\"text\":\"look\"},{\"data\":{\"n\":1}}]`) {
		t.Errorf("mixed parts: the model saw %s", got)
	}
	// Inline bytes go through the blob store and arrive as its URL.
	if got := send(a2a.FilePart{File: a2a.FileBytes{Bytes: base64.StdEncoding.EncodeToString([]byte("hello")), FileMeta: a2a.FileMeta{MimeType: "text/plain", Name: "h.txt"}}}); !strings.Contains(got, `h.txt`) || !strings.Contains(got, `uri`) {
		t.Errorf("inline file: the model saw %s", got)
	}
	// No parts: invalid params.
	if _, err := s.client.SendMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser)}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("no parts: %v, want invalid params", err)
	}
}

func TestInlineBytesNeedABlobStore(t *testing.T) {
	s := newStack(t, setup{agents: []*core.Agent{scripted("assistant", modeltest.Text("never"))}})
	_, err := s.client.SendMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser,
		a2a.FilePart{File: a2a.FileBytes{Bytes: base64.StdEncoding.EncodeToString([]byte("x"))}})})
	if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "blob store") {
		t.Fatalf("err = %v, want invalid params naming the blob store", err)
	}
}

func TestOutputs(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		dir := t.TempDir()
		blobs, err := blobfs.New(blobfs.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		// A generated file streams as a file artifact; the text as its own.
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{scripted("assistant",
			modeltest.Turn{Events: []core.ModelEvent{
				{Type: core.EventFile, File: &core.GeneratedFile{MediaType: "image/png", Data: []byte("png"), Name: "p.png"}},
				{Type: core.EventTextDelta, Delta: "see"},
				modeltest.Finish(core.FinishStop)}})}, blobs: blobs})
		evs, err := collect(t, s.client.SendStreamingMessage(t.Context(), textMessage("draw")))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(kinds(evs), " "); got != "task:working artifact:file:image/png artifact:see status:completed:final" {
			t.Fatalf("events = %s", got)
		}
		fp := evs[1].(*a2a.TaskArtifactUpdateEvent).Artifact.Parts[0].(a2a.FilePart).File.(a2a.FileURI)
		if fp.URI == "" || fp.Name != "p.png" {
			t.Fatalf("file part = %+v", fp)
		}
		readBack(t, s, "a stream with a file", folded(t, evs))
		// A json agent's object output is a data artifact.
		j := scripted("assistant", modeltest.JSON(map[string]any{"answer": 42}))
		j.Output.Format = core.FormatJSON
		s = newStack(t, setup{store: open(t), agents: []*core.Agent{j}})
		res, err := s.client.SendMessage(t.Context(), textMessage("q"))
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if len(task.Artifacts) != 1 {
			t.Fatalf("artifacts = %+v", task.Artifacts)
		}
		if dp, ok := task.Artifacts[0].Parts[len(task.Artifacts[0].Parts)-1].(a2a.DataPart); !ok || dp.Data["answer"] != float64(42) {
			t.Fatalf("artifact parts = %+v", task.Artifacts[0].Parts)
		}
		readBack(t, s, "a json output", task)
	})
}

func TestStream(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{scripted("assistant", modeltest.Text("Hel", "lo"))}})
		evs, err := collect(t, s.client.SendStreamingMessage(t.Context(), textMessage("hi")))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(kinds(evs), " "); got != "task:working artifact:Hel artifact:lo status:completed:final" {
			t.Fatalf("events = %s", got)
		}
		first := evs[1].(*a2a.TaskArtifactUpdateEvent)
		second := evs[2].(*a2a.TaskArtifactUpdateEvent)
		if first.Append || !second.Append || first.Artifact.ID != second.Artifact.ID {
			t.Fatalf("artifact updates: %+v then %+v", first, second)
		}
		task := evs[0].(*a2a.Task)
		if first.TaskID != task.ID || first.ContextID != task.ContextID {
			t.Fatalf("ids: %s/%s vs %s/%s", first.TaskID, first.ContextID, task.ID, task.ContextID)
		}
		readBack(t, s, "message/stream", folded(t, evs))
	})
}

func TestFailureIsAFailedStatus(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{scripted("assistant", modeltest.Fail(errors.New("dsn=postgres://secret")))}})
		evs, err := collect(t, s.client.SendStreamingMessage(t.Context(), textMessage("hi")))
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
		b, _ := json.Marshal(last)
		if last.Status.State != a2a.TaskStateFailed || !last.Final || strings.Contains(string(b), "secret") {
			t.Fatalf("final = %s", b)
		}
		readBack(t, s, "a failed stream", folded(t, evs))
	})
}

func humanAgent(turns ...modeltest.Turn) *core.Agent {
	a := scripted("assistant", turns...)
	a.HumanTools = []core.HumanToolDef{{Name: "confirm", Prompt: "May I publish?", Schema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`)}}
	return a
}

func TestInputRequiredThenResume(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		// The run says something before it asks: the task's text goes on
		// after the answer, in the answer's task as in tasks/get.
		ask := modeltest.ToolCall("human_confirm", map[string]string{"url": "https://bread.dev"})
		ask.Events = append([]core.ModelEvent{{Type: core.EventTextDelta, Delta: "Asking. "}}, ask.Events...)
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{humanAgent(ask, modeltest.Text("Published."))}})
		evs, err := collect(t, s.client.SendStreamingMessage(t.Context(), textMessage("publish")))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(kinds(evs), " "); got != "task:working artifact:Asking.  status:input-required:final" {
			t.Fatalf("events = %s", got)
		}
		task := evs[0].(*a2a.Task)
		request := evs[2].(*a2a.TaskStatusUpdateEvent).Status.Message
		if request == nil || request.Parts[0].(a2a.TextPart).Text != "May I publish?" {
			t.Fatalf("input request = %+v", request)
		}
		readBack(t, s, "an input-required stream", folded(t, evs))
		// An answer that does not match the schema is refused; the task still
		// waits.
		bad := &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.DataPart{Data: map[string]any{"nope": 1}})}
		if _, err := s.client.SendMessage(t.Context(), bad); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("bad answer: %v, want invalid params", err)
		}
		// The answer, a follow-up message on the task, resumes the run.
		answer := &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.DataPart{Data: map[string]any{"url": "https://bread.dev"}})}
		res, err := s.client.SendMessage(t.Context(), answer)
		if err != nil {
			t.Fatal(err)
		}
		done := res.(*a2a.Task)
		if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || artifactText(done) != "Asking. Published." {
			t.Fatalf("resumed task = %+v (%q)", done, artifactText(done))
		}
		readBack(t, s, "the answer's message/send", done)
		// The checkpoint is claimed once: the same answer again is refused.
		if _, err := s.client.SendMessage(t.Context(), answer); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("second answer: %v, want invalid params (the task is completed)", err)
		}
		readBack(t, s, "the answered task, after a refused second answer", done)
	})
}

// An input-required task is cancelled through the store: tasks/cancel
// answers canceled, tasks/get says so, and the answer that comes after is
// refused.
func TestCancelAnInputRequiredTask(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{humanAgent(
			modeltest.ToolCall("human_confirm", map[string]string{"url": "https://bread.dev"}))}})
		evs, err := collect(t, s.client.SendStreamingMessage(t.Context(), textMessage("publish")))
		if err != nil {
			t.Fatal(err)
		}
		task := evs[0].(*a2a.Task)
		got, err := s.client.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("tasks/cancel = %+v, %v", got, err)
		}
		readBack(t, s, "tasks/cancel of an input-required task", got)
		answer := &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.DataPart{Data: map[string]any{"url": "x"}})}
		if _, err := s.client.SendMessage(t.Context(), answer); err == nil {
			t.Fatal("an answer to a cancelled task was taken")
		}
		if _, err := s.client.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
			t.Fatalf("a second cancel: %v", err)
		}
	})
}

// streamInBackground starts message/stream and returns its events as they come.
func streamInBackground(t *testing.T, s *stack, ctx context.Context, p *a2a.MessageSendParams) <-chan a2a.Event {
	out := make(chan a2a.Event, 64)
	go func() {
		defer close(out)
		for ev, err := range s.client.SendStreamingMessage(ctx, p) {
			if err != nil {
				return
			}
			out <- ev
		}
	}()
	return out
}

func next(t *testing.T, ch <-chan a2a.Event) a2a.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return nil
}

func TestCancelAndResubscribe(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{scripted("assistant", modeltest.Block(nil, "work"))}})
		ch := streamInBackground(t, s, t.Context(), textMessage("go"))
		task := next(t, ch).(*a2a.Task)
		if a := next(t, ch).(*a2a.TaskArtifactUpdateEvent); a.Artifact.Parts[0].(a2a.TextPart).Text != "work" {
			t.Fatalf("artifact = %+v", a)
		}
		got, err := s.client.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateWorking {
			t.Fatalf("tasks/get = %+v, %v", got, err)
		}
		// Re-attach: the current state, then the text so far, then live events.
		resub := make(chan a2a.Event, 64)
		go func() {
			defer close(resub)
			for ev, err := range s.client.ResubscribeToTask(t.Context(), &a2a.TaskIDParams{ID: task.ID}) {
				if err != nil {
					return
				}
				resub <- ev
			}
		}()
		if ev := next(t, resub).(*a2a.Task); ev.Status.State != a2a.TaskStateWorking || ev.ID != task.ID {
			t.Fatalf("resubscribed task = %+v", ev)
		}
		if a := next(t, resub).(*a2a.TaskArtifactUpdateEvent); a.Artifact.Parts[0].(a2a.TextPart).Text != "work" || a.Append {
			t.Fatalf("resubscribed artifact = %+v", a)
		}
		canceled, err := s.client.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID})
		if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("tasks/cancel = %+v, %v", canceled, err)
		}
		for _, c := range []<-chan a2a.Event{ch, resub} {
			st := next(t, c).(*a2a.TaskStatusUpdateEvent)
			if st.Status.State != a2a.TaskStateCanceled || !st.Final {
				t.Fatalf("final status = %+v", st)
			}
		}
		waitState(t, s, task.ID, a2a.TaskStateCanceled)
		if _, err := s.client.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
			t.Fatalf("second cancel: %v, want not cancelable", err)
		}
		if _, err := collect(t, s.client.ResubscribeToTask(t.Context(), &a2a.TaskIDParams{ID: task.ID})); !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("resubscribe to a finished task: %v, want unsupported operation", err)
		}
		if _, err := s.client.CancelTask(t.Context(), &a2a.TaskIDParams{ID: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("cancel unknown: %v, want task not found", err)
		}
	})
}

func waitState(t *testing.T, s *stack, id a2a.TaskID, want a2a.TaskState) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.client.GetTask(t.Context(), &a2a.TaskQueryParams{ID: id})
		if err == nil && got.Status.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %+v, %v; want %s", id, got, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBusyContext(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{scripted("assistant", modeltest.Block(nil, "work"))}})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		first := textMessage("go")
		first.Message.ContextID = "ctx-busy"
		ch := streamInBackground(t, s, ctx, first)
		task := next(t, ch).(*a2a.Task)
		next(t, ch)
		// A second message on the busy context: the agent's policy (reject)
		// refuses it before any run starts.
		again := textMessage("again")
		again.Message.ContextID = "ctx-busy"
		_, err := s.client.SendMessage(t.Context(), again)
		if !errors.Is(err, a2a.ErrServerError) || !strings.Contains(err.Error(), core.CodeSessionBusy) {
			t.Fatalf("busy context: %v, want a server error naming %s", err, core.CodeSessionBusy)
		}
		// A message on the working task itself: it takes no input now.
		onTask := &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.TextPart{Text: "more"})}
		if _, err := s.client.SendMessage(t.Context(), onTask); !errors.Is(err, a2a.ErrServerError) || !strings.Contains(err.Error(), "TASK_BUSY") {
			t.Fatalf("message on a working task: %v", err)
		}
		// A task of another context is not this task.
		wrong := &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "x"})}
		wrong.Message.TaskID, wrong.Message.ContextID = task.ID, "other"
		if _, err := s.client.SendMessage(t.Context(), wrong); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("wrong context: %v", err)
		}
		cancel()
	})
}

func TestNonBlockingSend(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{scripted("assistant", modeltest.Slow(modeltest.Text("late"), 50*time.Millisecond))}})
		no := false
		p := textMessage("hi")
		p.Config = &a2a.MessageSendConfig{Blocking: &no}
		res, err := s.client.SendMessage(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateWorking {
			t.Fatalf("task = %+v", task)
		}
		waitState(t, s, task.ID, a2a.TaskStateCompleted)
	})
}

// rpcCode posts one JSON-RPC request (a streaming method's error comes as
// its first SSE envelope) and returns the error's code, 0 for none, and
// the raw answer.
func rpcCode(t *testing.T, url, body string) (float64, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if res.Header.Get("Content-Type") == "text/event-stream" {
		for line := range strings.Lines(text) {
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				text = data
				break
			}
		}
	}
	var v struct {
		Error *struct {
			Code float64 `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: answer %q: %v", body, text, err)
	}
	if v.Error == nil {
		return 0, text
	}
	return v.Error.Code, text
}

// call is one JSON-RPC request's body.
func call(method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return string(b)
}

// sendBody is a message/send of one message with parts, on the task or
// context when given.
func sendBody(method, taskID, contextID string, parts ...any) string {
	m := map[string]any{"kind": "message", "messageId": "m1", "role": "user", "parts": parts}
	if taskID != "" {
		m["taskId"] = taskID
	}
	if contextID != "" {
		m["contextId"] = contextID
	}
	return call(method, map[string]any{"message": m})
}

func textPart(text string) any { return map[string]any{"kind": "text", "text": text} }

func dataPart(data any) any { return map[string]any{"kind": "data", "data": data} }

// brokenRuns is a memory store whose run records cannot be read: a store
// failure while reading a task.
type brokenRuns struct{ *memory.Store }

func (brokenRuns) GetRun(context.Context, string) (core.RunRecord, error) {
	return core.RunRecord{}, errors.New("disk on fire at /var/lib/secret")
}

// TestErrorTable holds the README's error table: each row, each of its
// cases, over raw HTTP, on every store.
func TestErrorTable(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		type row struct {
			code float64
			name string
			body string
		}
		check := func(t *testing.T, url string, rows []row) {
			t.Helper()
			for _, r := range rows {
				if got, answer := rpcCode(t, url, r.body); got != r.code {
					t.Errorf("%s: code %v, want %v: %s", r.name, got, r.code, answer)
				}
			}
		}
		send := func(t *testing.T, s *stack, parts ...a2a.Part) *a2a.Task {
			t.Helper()
			res, err := s.client.SendMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, parts...)})
			if err != nil {
				t.Fatal(err)
			}
			return res.(*a2a.Task)
		}

		t.Run("requests and finished tasks", func(t *testing.T) {
			a := scripted("assistant", modeltest.Text("x"))
			a.InputSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
			other := scripted("other", modeltest.Text("y"))
			s := newStack(t, setup{store: open(t), agents: []*core.Agent{a, other}})
			url := s.url + "/a2a"
			done := send(t, s, a2a.DataPart{Data: map[string]any{"q": "x"}})
			var otherRun string
			for c, err := range s.in.Run(t.Context(), "other", "hi", core.RunOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				otherRun = c.Base().RunID
			}
			id := string(done.ID)
			check(t, url, []row{
				{-32700, "a body that is not JSON", `{`},
				{-32700, "a part of unknown kind", sendBody("message/send", "", "", map[string]any{"kind": "nope", "text": "x"})},
				{-32600, "not JSON-RPC 2.0", `{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"id":"x"}}`},
				{-32601, "an unknown method", call("tasks/nope", map[string]any{})},
				{-32602, "no parts", sendBody("message/send", "", "")},
				{-32700, "a data part holding something other than an object", sendBody("message/send", "", "", dataPart([]any{1}))},
				{-32602, "a data part holding null", sendBody("message/send", "", "", dataPart(nil))},
				{-32602, "inline bytes without a blob store", sendBody("message/send", "", "", map[string]any{"kind": "file", "file": map[string]any{"bytes": "eA=="}})},
				{-32602, "no task id", call("tasks/get", map[string]any{"id": ""})},
				{-32602, "an input that fails its schema", sendBody("message/send", "", "", textPart("not an object"))},
				{-32602, "a message on a finished task", sendBody("message/send", id, "", dataPart(map[string]any{"q": "x"}))},
				{-32602, "a contextId that is not the task's", sendBody("message/send", id, "elsewhere", dataPart(map[string]any{"q": "x"}))},
				{-32001, "an unknown task id", call("tasks/get", map[string]any{"id": "nope"})},
				{-32001, "a run of another agent", call("tasks/get", map[string]any{"id": otherRun})},
				{-32002, "tasks/cancel on a finished task", call("tasks/cancel", map[string]any{"id": id})},
				{-32003, "a push notification method", call("tasks/pushNotificationConfig/get", map[string]any{"id": id})},
				{-32003, "another push notification method", call("tasks/pushNotificationConfig/set", map[string]any{"taskId": id, "pushNotificationConfig": map[string]any{"url": "https://x"}})},
				{-32004, "tasks/resubscribe on a finished task", call("tasks/resubscribe", map[string]any{"id": id})},
			})
		})

		t.Run("answers", func(t *testing.T) {
			s := newStack(t, setup{store: open(t), agents: []*core.Agent{humanAgent(modeltest.ToolCall("human_confirm", map[string]string{"url": "u"}))}})
			asked := send(t, s, a2a.TextPart{Text: "publish"})
			check(t, s.url+"/a2a", []row{
				{-32602, "an answer that fails its schema", sendBody("message/send", string(asked.ID), "", dataPart(map[string]any{"nope": 1}))},
			})
			// Another request holds the checkpoint while it resumes it.
			cp := asked.Status.Message.Parts[1].(a2a.DataPart).Data["checkpointId"].(string)
			now := time.Now()
			if _, err := s.in.Storage().ClaimCheckpoint(t.Context(), cp, "another-request", now.UnixMilli(), now.Add(time.Minute).UnixMilli()); err != nil {
				t.Fatal(err)
			}
			check(t, s.url+"/a2a", []row{
				{-32000, "an answer while another request resumes the checkpoint", sendBody("message/send", string(asked.ID), "", dataPart(map[string]any{"url": "u"}))},
			})
		})

		t.Run("a stopping instance", func(t *testing.T) {
			s := newStack(t, setup{store: open(t), agents: []*core.Agent{scripted("assistant", modeltest.Text("x"))}})
			if err := s.in.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
			// Not JSON-RPC any more: HTTP 503, as a draining server answers.
			res, err := http.Post(s.url+"/a2a", "application/json", strings.NewReader(sendBody("message/send", "", "", textPart("hi"))))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "5" {
				t.Fatalf("a stopped instance answers %s, Retry-After %q", res.Status, res.Header.Get("Retry-After"))
			}
		})

		t.Run("busy", func(t *testing.T) {
			s := newStack(t, setup{store: open(t), maxRuns: 2, agents: []*core.Agent{scripted("assistant", modeltest.Block(nil, "work"))}})
			url := s.url + "/a2a"
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			first := textMessage("go")
			first.Message.ContextID = "busy"
			working := next(t, streamInBackground(t, s, ctx, first)).(*a2a.Task)
			check(t, url, []row{
				{-32000, "a busy context", sendBody("message/send", "", "busy", textPart("again"))},
				{-32000, "a message on a working task", sendBody("message/send", string(working.ID), "", textPart("more"))},
			})
			second := textMessage("go")
			second.Message.ContextID = "other"
			next(t, streamInBackground(t, s, ctx, second))
			check(t, url, []row{{-32000, "a full instance", sendBody("message/send", "", "third", textPart("go"))}})
			// A record that says working, of a run no replica runs.
			runs := s.in.Storage()
			if _, err := runs.CreateSession(t.Context(), core.NewSession{ID: "ghost", AgentID: "assistant"}); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			if err := runs.PutRun(t.Context(), core.RunRecord{ID: "ghost-run", AgentID: "assistant", SessionID: "ghost", Status: core.RunRunning,
				Owner: "elsewhere", LeaseUntil: now.Add(time.Hour).UnixMilli(), CreatedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli()}); err != nil {
				t.Fatal(err)
			}
			check(t, url, []row{{-32002, "tasks/cancel on a working task no replica runs", call("tasks/cancel", map[string]any{"id": "ghost-run"})}})
		})

		t.Run("a task waiting inside a delegation", func(t *testing.T) {
			boss := scripted("assistant", modeltest.ToolCall("core_delegate", map[string]any{"agentId": "writer", "input": "go"}))
			boss.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "writer", Visibility: core.Mediate}}}
			writer := humanAgent(modeltest.ToolCall("human_confirm", map[string]string{"url": "u"}))
			writer.ID = "writer"
			s := newStack(t, setup{store: open(t), agents: []*core.Agent{boss, writer}})
			asked := send(t, s, a2a.TextPart{Text: "go"})
			if asked.Status.State != a2a.TaskStateInputRequired {
				t.Fatalf("task = %+v", asked.Status)
			}
			check(t, s.url+"/a2a", []row{{-32002, "tasks/cancel on a task waiting inside a delegation", call("tasks/cancel", map[string]any{"id": string(asked.ID)})}})
		})
	})

	t.Run("inline bytes over the limit", func(t *testing.T) {
		blobs, err := blobfs.New(blobfs.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		s := newStack(t, setup{blobs: blobs, maxBody: 32 << 20, agents: []*core.Agent{scripted("assistant", modeltest.Text("x"))}})
		big := base64.StdEncoding.EncodeToString(make([]byte, a2ap.MaxInlineFileBytes+1))
		if code, answer := rpcCode(t, s.url+"/a2a", sendBody("message/send", "", "", map[string]any{"kind": "file", "file": map[string]any{"bytes": big}})); code != -32602 {
			t.Fatalf("code %v, want -32602: %.300s", code, answer)
		}
	})

	t.Run("a store that fails", func(t *testing.T) {
		s := newStack(t, setup{store: brokenRuns{memory.New()}, agents: []*core.Agent{scripted("assistant", modeltest.Text("x"))}})
		code, answer := rpcCode(t, s.url+"/a2a", call("tasks/get", map[string]any{"id": "any"}))
		if code != -32603 || strings.Contains(answer, "secret") || strings.Contains(answer, "fire") {
			t.Fatalf("code %v, want -32603 without the cause: %s", code, answer)
		}
	})
}

func TestOptions(t *testing.T) {
	for _, o := range []a2ap.Options{
		{URL: "/a2a"},
		{Agent: "a"},
		{Agent: "a", URL: "ftp://x/a2a"},
		{Agent: "a", URL: "a2a"},
		{Agent: "a", URL: "/a2a", CardPath: "card"},
		{Agent: "a", URL: "/x", CardPath: "/x"},
		{Agent: "a", URL: "https://x.example/", SpecVersion: a2ap.SpecV1},
		{Agent: "a", URL: "/a2a/v1", SpecVersion: a2ap.SpecV1, GRPC: true}, // gRPC is the v0.3 proto
	} {
		if _, err := a2ap.New(o); !isCode(err, core.CodeInvalidConfig) {
			t.Errorf("%+v: %v, want INVALID_CONFIG", o, err)
		}
	}
	p, err := a2ap.New(a2ap.Options{Agent: "missing", URL: "/a2a"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{scripted("assistant")}, Plugins: []core.BreadPlugin{p}})
	if err == nil {
		in, _ := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{scripted("assistant")}, Plugins: []core.BreadPlugin{p}})
		err = in.Start(t.Context())
	}
	if !isCode(err, core.CodeAgentNotFound) {
		t.Fatalf("missing agent: %v", err)
	}
	if got := a2ap.Actions(); len(got) != 2 || got[0] != "a2a.card" || got[1] != "a2a.rpc" {
		t.Fatalf("actions = %v", got)
	}
}

func isCode(err error, code string) bool {
	var be *core.BreadError
	return errors.As(err, &be) && be.Code == code
}

// userClient is an HTTP client that says who it is in X-User.
func userClient(user string) *http.Client {
	return &http.Client{Transport: asUser{user}}
}

type asUser struct{ user string }

func (u asUser) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-User", u.user)
	return http.DefaultTransport.RoundTrip(r)
}

type headerAuth struct{}

func (headerAuth) Name() string { return "header" }

func (headerAuth) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return &core.AuthIdentity{Subject: u}, nil
	}
	return nil, core.Errorf(core.CodeUnauthorized, "who are you")
}

// TestTasksBelongToTheirStarter: with auth, a task is read, cancelled,
// resubscribed to and answered only by the identity that started it; the
// routes' actions are granted like core's.
func TestTasksBelongToTheirStarter(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		var actions []string
		s := newStack(t, setup{store: open(t),
			agents: []*core.Agent{humanAgent(modeltest.ToolCall("human_confirm", map[string]string{"url": "u"}), modeltest.Text("done"))},
			auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
				actions = append(actions, action)
				return (action == a2ap.ActionCard || action == a2ap.ActionRPC) && id.Subject != "intruder"
			}},
		})
		res, err := s.client.SendMessage(t.Context(), textMessage("publish"))
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("task = %+v", task)
		}
		card, err := agentcard.NewResolver(userClient("bob")).Resolve(t.Context(), s.url)
		if err != nil {
			t.Fatal(err)
		}
		bob, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(userClient("bob")))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bob.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("bob reads ann's task: %v", err)
		}
		if _, err := bob.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("bob cancels ann's task: %v", err)
		}
		if _, err := collect(t, bob.ResubscribeToTask(t.Context(), &a2a.TaskIDParams{ID: task.ID})); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("bob resubscribes to ann's task: %v", err)
		}
		answer := &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.DataPart{Data: map[string]any{"url": "u"}})}
		if _, err := bob.SendMessage(t.Context(), answer); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("bob answers ann's task: %v", err)
		}
		res, err = s.client.SendMessage(t.Context(), answer)
		if err != nil || res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
			t.Fatalf("ann answers: %+v, %v", res, err)
		}
		// The intruder is refused the action itself: HTTP 403, before JSON-RPC.
		intruder, _ := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(userClient("intruder")))
		if _, err := intruder.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID}); err == nil || !strings.Contains(err.Error(), "403") {
			t.Errorf("intruder: %v", err)
		}
		if !slices.Contains(actions, a2ap.ActionCard) || !slices.Contains(actions, a2ap.ActionRPC) {
			t.Errorf("actions authorized: %v", actions)
		}
	})
}

// TestDelegatedInputRequired: a supervisor whose delegated run waits for a
// human is input-required; the answer on the supervisor's task resumes the
// delegated run, and the supervisor finishes.
func TestDelegatedInputRequired(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		boss := scripted("assistant", modeltest.ToolCall("core_delegate", map[string]any{"agentId": "writer", "input": "go"}), modeltest.Text("all done"))
		boss.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "writer", Visibility: core.Mediate}}}
		writer := humanAgent(modeltest.ToolCall("human_confirm", map[string]string{"url": "u"}), modeltest.Text("draft"))
		writer.ID = "writer"
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{boss, writer}})
		res, err := s.client.SendMessage(t.Context(), textMessage("go"))
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("task = %+v", task.Status)
		}
		readBack(t, s, "a supervisor's input-required task", task)
		answer := &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.DataPart{Data: map[string]any{"url": "u"}})}
		res, err = s.client.SendMessage(t.Context(), answer)
		if err != nil {
			t.Fatal(err)
		}
		done := res.(*a2a.Task)
		if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || artifactText(done) != "all done" {
			t.Fatalf("the answer returned %+v (%q)", done, artifactText(done))
		}
		readBack(t, s, "the supervisor's answered task", done)
	})
}
