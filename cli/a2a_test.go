package cli_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/breadai/bread/cli"
	"github.com/breadai/bread/engine"
)

// a2aClient resolves the Agent Card at base+cardPath and connects
// a2a-go's client to the endpoint it advertises.
func a2aClient(t *testing.T, base, cardPath string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), base, agentcard.WithPath(cardPath))
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func a2aText(t *a2a.Task) string {
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

// TestA2AFromBreadYAML: `plugins: [{type: a2a, ...}]` serves the agent's
// Agent Card and JSON-RPC endpoint on `bread start`; a2a-go's client sends
// a message over a real socket and reads the task back.
func TestA2AFromBreadYAML(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nplugins:\n  - {type: a2a, agent: echo, url: /a2a, grpc: true}\n" +
			"  - {type: a2a, agent: echo, url: /a2a/v1, cardPath: /.well-known/agent-card-v1.json, specVersion: \"1.0\"}\n",
	}))
	base := serve(t, dir).base
	client := a2aClient(t, base, "/.well-known/agent-card.json")
	res, err := client.SendMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || a2aText(task) != "Hello there." {
		t.Fatalf("result = %#v", res)
	}
	got, err := client.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || got.ContextID != task.ContextID {
		t.Fatalf("tasks/get = %+v, %v", got, err)
	}
	if _, err := client.GetTask(t.Context(), &a2a.TaskQueryParams{ID: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
	// The gRPC binding, on the same listener (h2c): the same task.
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	grpcClient, err := a2aclient.NewFromCard(t.Context(), card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolGRPC}}),
		a2aclient.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer grpcClient.Destroy()
	if got, err := grpcClient.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateCompleted || a2aText(got) != "Hello there." {
		t.Fatalf("GetTask over gRPC = %+v, %v", got, err)
	}
	if _, err := grpcClient.GetTask(t.Context(), &a2a.TaskQueryParams{ID: "nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown task over gRPC: %v", err)
	}
	// The v1.0 mount of the same agent reads the same task.
	res2, err := http.Post(base+"/a2a/v1", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+string(task.ID)+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res2.Body)
	res2.Body.Close()
	if !strings.Contains(string(body), `"state":"TASK_STATE_COMPLETED"`) {
		t.Fatalf("GetTask over v1.0: %s", body)
	}
	// Another bread delegates to it: `remoteAgents` of type a2a.
	front := project(t, map[string]string{
		"bread.yaml": "store: {type: sqlite, path: ./bread.db}\nremoteAgents:\n  helper: {type: a2a, url: \"" + base + "\"}\n",
	})
	r := run(t, cli.Options{}, "invoke", "--cwd", front, "helper", "hi")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "Hello there.") {
		t.Fatalf("invoke through A2A: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestA2AConfigErrors: a missing url or an unknown agent fails the boot.
func TestA2AConfigErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"  - {type: a2a, agent: echo}\n":                                                 "INVALID_CONFIG",
		"  - {type: a2a, agent: ghost, url: /a2a}\n":                                     "AGENT_NOT_FOUND",
		"  - {type: a2a, agnet: echo, url: /a2a}\n":                                      "INVALID_CONFIG",
		"  - {type: a2a, agent: echo, url: /a2a/v1, specVersion: \"1.0\", grpc: true}\n": "INVALID_CONFIG",
	} {
		dir := project(t, basic(map[string]string{
			"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nplugins:\n" + yaml,
		}))
		r := run(t, cli.Options{}, "invoke", "--cwd", dir, "echo", "hi")
		if r.code == cli.ExitOK || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d: %s", yaml, r.code, r.stderr)
		}
	}
}

// headerClient is an HTTP client that sends one header with every request.
func headerClient(name, value string) *http.Client {
	return &http.Client{Transport: headerRT{name, value}}
}

type headerRT struct{ name, value string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// TestA2ATasksFollowRunOwnership: behind auth, an A2A task is the run
// ownership policy's like any run: another caller cannot read it, a
// strategy with ownership off (an operator) can.
func TestA2ATasksFollowRunOwnership(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"bread.yaml": `entrypoints: [echo]
store: {type: sqlite, path: ./bread.db}
server:
  auth:
    - {type: apikey, name: ann, header: X-Ann-Key, keys: [ann-key]}
    - {type: apikey, name: bob, header: X-Bob-Key, keys: [bob-key]}
    - {type: apikey, name: ops, header: X-Ops-Key, keys: [ops-key], ownership: false}
plugins:
  - {type: a2a, agent: echo, url: /a2a}
`,
	}))
	base := serve(t, dir).base
	clientAs := func(header, key string) *a2aclient.Client {
		t.Helper()
		hc := headerClient(header, key)
		var card *a2a.AgentCard
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if card, err = agentcard.NewResolver(hc).Resolve(t.Context(), base); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(hc))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ann, bob, ops := clientAs("X-Ann-Key", "ann-key"), clientAs("X-Bob-Key", "bob-key"), clientAs("X-Ops-Key", "ops-key")
	res, err := ann.SendMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	if _, err := bob.GetTask(t.Context(), &a2a.TaskQueryParams{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob reads ann's task: %v", err)
	}
	for name, c := range map[string]*a2aclient.Client{"ann": ann, "ops": ops} {
		if got, err := c.GetTask(t.Context(), &a2a.TaskQueryParams{ID: id}); err != nil || got.Status.State != a2a.TaskStateCompleted {
			t.Errorf("%s reads the task: %+v, %v", name, got, err)
		}
	}
}

// TestA2APushFromBreadYAML: `pushNotifications: true` on an a2a plugin
// delivers its push notifications through the engine's webhook sender, as
// bread.yaml's webhooks section configures it (signed with its secret,
// loopback allowed, retried after a 500 with its backoff), on both spec
// versions: a v0.3 message/send and a v1.0 HTTP+JSON message:send, each
// with a receiver, each receiver getting working then completed.
func TestA2APushFromBreadYAML(t *testing.T) {
	type delivery struct {
		path, state string
	}
	got := make(chan delivery, 16)
	var mu sync.Mutex
	calls := 0
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		h := r.Header.Get(engine.SignatureHeader)
		ts, _, _ := strings.Cut(strings.TrimPrefix(h, "t="), ",")
		unix, _ := strconv.ParseInt(ts, 10, 64)
		if h != engine.SignWebhook("s3cret", time.Unix(unix, 0), b) {
			t.Errorf("%s: signature %q does not verify", r.URL.Path, h)
		}
		var v struct {
			Status struct{ State string } `json:"status"`
			Task   struct {
				Status struct{ State string } `json:"status"`
			} `json:"task"`
		}
		_ = json.Unmarshal(b, &v)
		got <- delivery{r.URL.Path, v.Status.State + v.Task.Status.State}
	}))
	defer recv.Close()
	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\n" +
			"webhooks: {secret: s3cret, allowPrivateNetworks: true, backoff: 10ms}\nplugins:\n" +
			"  - {type: a2a, agent: echo, url: /a2a, pushNotifications: true}\n" +
			"  - {type: a2a, agent: echo, url: /a2a/v1, cardPath: /.well-known/agent-card-v1.json, specVersion: \"1.0\", pushNotifications: true}\n",
	}))
	base := serve(t, dir).base
	for _, card := range []string{"/.well-known/agent-card.json", "/.well-known/agent-card-v1.json"} {
		res, err := http.Get(base + card)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), `"pushNotifications":true`) {
			t.Fatalf("%s does not advertise push notifications: %s", card, b)
		}
	}
	post := func(url, body string) {
		t.Helper()
		res, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || strings.Contains(string(b), `"error"`) {
			t.Fatalf("POST %s: %d %s", url, res.StatusCode, b)
		}
	}
	post(base+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]},`+
		`"configuration":{"pushNotificationConfig":{"url":"`+recv.URL+`/v03"}}}}`)
	post(base+"/a2a/v1/message:send", `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]},`+
		`"configuration":{"taskPushNotificationConfig":{"url":"`+recv.URL+`/v1"}}}`)
	states := map[string][]string{}
	for len(states["/v03"]) < 2 || len(states["/v1"]) < 2 {
		select {
		case d := <-got:
			states[d.path] = append(states[d.path], d.state)
		case <-time.After(20 * time.Second):
			t.Fatalf("deliveries so far: %v", states)
		}
	}
	if strings.Join(states["/v03"], " ") != "working completed" || strings.Join(states["/v1"], " ") != "TASK_STATE_WORKING TASK_STATE_COMPLETED" {
		t.Fatalf("deliveries: %v", states)
	}
}
