package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine/webhook"
	a2ap "github.com/breadai/bread/protocols/a2a"
	"github.com/breadai/bread/stores/postgres"
	"github.com/breadai/bread/stores/teststores"
)

// pushReceiver records, per path, the states delivered to it; its first
// delivery is answered 500 (the sender must retry it).
type pushReceiver struct {
	t *testing.T
	// v1 reads a v1.0 delivery (a StreamResponse holding the task)
	// instead of a v0.3 one (the task).
	v1     bool
	mu     sync.Mutex
	calls  int
	states map[string][]string
	auth   map[string]string
	done   map[string]chan struct{}
}

func (rc *pushReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.calls++
	if rc.calls == 1 {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if err := webhook.Verify("s3cret", r.Header.Get(webhook.SignatureHeader), body, time.Now(), time.Minute); err != nil {
		rc.t.Errorf("%s: signature: %v", r.URL.Path, err)
	}
	var state string
	var terminal bool
	if rc.v1 {
		var res struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		}
		if err := json.Unmarshal(body, &res); err != nil || res.Task.ID == "" {
			rc.t.Errorf("%s: body %s: %v", r.URL.Path, body, err)
		}
		state = res.Task.Status.State
		terminal = state == "TASK_STATE_COMPLETED" || state == "TASK_STATE_FAILED" || state == "TASK_STATE_CANCELED"
	} else {
		var task a2a.Task
		if err := json.Unmarshal(body, &task); err != nil {
			rc.t.Errorf("%s: body %s: %v", r.URL.Path, body, err)
		}
		state, terminal = string(task.Status.State), task.Status.State.Terminal()
	}
	rc.states[r.URL.Path] = append(rc.states[r.URL.Path], state)
	rc.auth[r.URL.Path] = r.Header.Get("X-A2A-Notification-Token") + "|" + r.Header.Get("Authorization")
	if terminal {
		close(rc.done[r.URL.Path])
	}
}

func TestPushNotifications(t *testing.T) {
	rc := &pushReceiver{t: t, states: map[string][]string{}, auth: map[string]string{}, done: map[string]chan struct{}{"/a": make(chan struct{}), "/b": make(chan struct{})}}
	recv := httptest.NewServer(rc)
	defer recv.Close()
	send := webhook.New(webhook.Options{Secret: "s3cret", AllowPrivateNetworks: true, Backoff: time.Millisecond})
	defer send.Close()
	ask := modeltest.ToolCall("human_confirm", map[string]string{"url": "https://bread.dev"})
	s := newStack(t, setup{opts: a2ap.Options{Push: send}, agents: []*core.Agent{humanAgent(ask, modeltest.Text("Published."))}})
	if !s.card.Capabilities.PushNotifications {
		t.Fatal("the card does not advertise push notifications")
	}
	// message/send registers /a; the run stops at input-required.
	msg := textMessage("publish")
	msg.Config = &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{URL: recv.URL + "/a", Token: "tok-a"}}
	res, err := s.client.SendMessage(t.Context(), msg)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task %+v", task.Status)
	}
	// tasks/pushNotificationConfig/set adds /b with a bearer token, and a
	// third config that is deleted again.
	b, err := s.client.SetTaskPushConfig(t.Context(), &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{ID: "b", URL: recv.URL + "/b", Auth: &a2a.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "xyz"}}})
	if err != nil || b.Config.ID != "b" {
		t.Fatalf("set: %+v, %v", b, err)
	}
	if _, err := s.client.SetTaskPushConfig(t.Context(), &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{ID: "c", URL: recv.URL + "/c"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.client.DeleteTaskPushConfig(t.Context(), &a2a.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "c"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.client.GetTaskPushConfig(t.Context(), &a2a.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "b"}); err != nil || got.Config.URL != recv.URL+"/b" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	list, err := s.client.ListTaskPushConfig(t.Context(), &a2a.ListTaskPushConfigParams{TaskID: task.ID})
	if err != nil || len(list) != 2 || list[1].Config.ID != "b" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if _, err := s.client.SetTaskPushConfig(t.Context(), &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{URL: "ftp://x/y"}}); err == nil {
		t.Fatal("a receiver the guard refuses was accepted")
	}
	// The answer resumes the task to its end.
	answer := &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.DataPart{Data: map[string]any{"url": "https://bread.dev"}})}
	if _, err := s.client.SendMessage(t.Context(), answer); err != nil {
		t.Fatal(err)
	}
	<-rc.done["/a"]
	<-rc.done["/b"]
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if got := strings.Join(rc.states["/a"], " "); got != "working input-required working completed" {
		t.Errorf("/a got %s", got)
	}
	if got := strings.Join(rc.states["/b"], " "); !strings.HasSuffix(got, "working completed") {
		t.Errorf("/b got %s", got)
	}
	if rc.auth["/a"] != "tok-a|" || rc.auth["/b"] != "|Bearer xyz" {
		t.Errorf("auth %v", rc.auth)
	}
	// /c lived while the task waited for input: a delivery of that state
	// may have been on its way when it was deleted, but nothing after the
	// delete (the resume's working and completed) may reach it.
	for _, st := range rc.states["/c"] {
		if st != "input-required" {
			t.Errorf("/c, deleted before the answer, got %v", rc.states["/c"])
			break
		}
	}
}

// TestV1PushNotifications: the same deliveries over the v1.0 binding, each
// a StreamResponse holding the task: a config given with SendMessage, one
// created over HTTP+JSON with Bearer credentials, one created over JSON-RPC
// and deleted over HTTP+JSON; each config method answers alike on both
// bindings; the first delivery is answered 500 and arrives on the retry,
// signed.
func TestV1PushNotifications(t *testing.T) {
	rc := &pushReceiver{t: t, v1: true, states: map[string][]string{}, auth: map[string]string{}, done: map[string]chan struct{}{"/a": make(chan struct{}), "/b": make(chan struct{})}}
	recv := httptest.NewServer(rc)
	defer recv.Close()
	send := webhook.New(webhook.Options{Secret: "s3cret", AllowPrivateNetworks: true, Backoff: time.Millisecond})
	defer send.Close()
	ask := modeltest.ToolCall("human_confirm", map[string]string{"url": "https://bread.dev"})
	s := newStack(t, setup{agents: []*core.Agent{humanAgent(ask, modeltest.Text("Published."))},
		opts: a2ap.Options{SpecVersion: a2ap.SpecV1, URL: "/a2a/v1", CardPath: "/.well-known/agent-card-v1.json", Push: send}})
	rpc, rest := s.url+"/a2a/v1", s.url+"/a2a/v1"
	n := &normalizer{ids: map[string]string{}}
	_, card := n.restCall(t, http.MethodGet, s.url+"/.well-known/agent-card-v1.json", nil, nil)
	if card.(map[string]any)["capabilities"].(map[string]any)["pushNotifications"] != true {
		t.Fatalf("the card does not advertise push notifications: %v", card)
	}
	msg := v1Text("publish")
	msg["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": recv.URL + "/a", "token": "tok-a"}}
	sent := result(t, n.call(t, rpc, "SendMessage", msg, nil)).(map[string]any)["task"].(map[string]any)
	if st := sent["status"].(map[string]any)["state"]; st != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("task %v", sent)
	}
	id := key(n, sent["id"].(string))
	configs := rest + "/tasks/" + id + "/pushNotificationConfigs"
	code, b := n.restCall(t, http.MethodPost, configs, map[string]any{"id": "b", "url": recv.URL + "/b", "authentication": map[string]any{"scheme": "Bearer", "credentials": "xyz"}}, nil)
	if code != http.StatusOK || b.(map[string]any)["id"] != "b" || b.(map[string]any)["taskId"] != sent["id"] {
		t.Fatalf("create over REST: %d %v", code, b)
	}
	result(t, n.call(t, rpc, "CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "c", "url": recv.URL + "/c"}, nil))
	if code, got := n.restCall(t, http.MethodDelete, configs+"/c", nil, nil); code != http.StatusOK || len(got.(map[string]any)) != 0 {
		t.Fatalf("delete over REST: %d %v", code, got)
	}
	_, got := n.restCall(t, http.MethodGet, configs+"/b", nil, nil)
	if rpcGot := result(t, n.call(t, rpc, "GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "b"}, nil)); !reflect.DeepEqual(got, rpcGot) || !reflect.DeepEqual(got, b) {
		t.Fatalf("get: REST %v, JSON-RPC %v, created %v", got, rpcGot, b)
	}
	_, list := n.restCall(t, http.MethodGet, configs, nil, nil)
	if rpcList := result(t, n.call(t, rpc, "ListTaskPushNotificationConfigs", map[string]any{"taskId": id}, nil)); !reflect.DeepEqual(list, rpcList) || len(list.(map[string]any)["configs"].([]any)) != 2 {
		t.Fatalf("list: REST %v, JSON-RPC %v", list, rpcList)
	}
	if code, got := n.restCall(t, http.MethodPost, configs, map[string]any{"url": "ftp://x/y"}, nil); code != http.StatusBadRequest {
		t.Fatalf("a receiver the guard refuses: %d %v", code, got)
	}
	if code, got := n.restCall(t, http.MethodGet, configs+"/c", nil, nil); code != http.StatusBadRequest {
		t.Fatalf("the deleted config: %d %v", code, got)
	}
	// The answer, over HTTP+JSON, resumes the task to its end.
	answer := map[string]any{"message": map[string]any{"messageId": "m2", "role": "ROLE_USER", "taskId": id, "parts": []any{map[string]any{"data": map[string]any{"url": "https://bread.dev"}}}}}
	if code, got := n.restCall(t, http.MethodPost, rest+"/message:send", answer, nil); code != http.StatusOK {
		t.Fatalf("answer: %d %v", code, got)
	}
	<-rc.done["/a"]
	<-rc.done["/b"]
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if got := strings.Join(rc.states["/a"], " "); got != "TASK_STATE_WORKING TASK_STATE_INPUT_REQUIRED TASK_STATE_WORKING TASK_STATE_COMPLETED" {
		t.Errorf("/a got %s", got)
	}
	if got := strings.Join(rc.states["/b"], " "); !strings.HasSuffix(got, "TASK_STATE_WORKING TASK_STATE_COMPLETED") {
		t.Errorf("/b got %s", got)
	}
	if rc.auth["/a"] != "tok-a|" || rc.auth["/b"] != "|Bearer xyz" {
		t.Errorf("auth %v", rc.auth)
	}
	for _, st := range rc.states["/c"] {
		if st != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("/c, deleted before the answer, got %v", rc.states["/c"])
			break
		}
	}
}

// TestPushConfigsAcrossReplicas: two engines on one PostgreSQL schema, each
// with its own bus. A config set on replica A for a task A started (and
// that waits for input) is kept in the store, so replica B, which the
// answer reaches and which runs the rest of the task, delivers the task's
// next states to it; A delivered the state it was set in, and B does not
// repeat it. Once the task finished its configs are gone from the store.
func TestPushConfigsAcrossReplicas(t *testing.T) {
	url := teststores.PostgresURL(t)
	open := func() core.BreadStore {
		s, err := postgres.New(postgres.Options{URL: url, MaxOpenConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		return s
	}
	rc := &pushReceiver{t: t, states: map[string][]string{}, auth: map[string]string{}, done: map[string]chan struct{}{"/a": make(chan struct{})}}
	recv := httptest.NewServer(rc)
	defer recv.Close()
	send := webhook.New(webhook.Options{Secret: "s3cret", AllowPrivateNetworks: true, Backoff: time.Millisecond})
	defer send.Close()
	ask := modeltest.ToolCall("human_confirm", map[string]string{"url": "https://bread.dev"})
	storeA := open()
	a := newStack(t, setup{store: storeA, opts: a2ap.Options{Push: send}, agents: []*core.Agent{humanAgent(ask)}})
	b := newStack(t, setup{store: open(), opts: a2ap.Options{Push: send}, agents: []*core.Agent{humanAgent(modeltest.Text("Published."))}})

	res, err := a.client.SendMessage(t.Context(), textMessage("publish"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task %+v", task.Status)
	}
	if _, err := a.client.SetTaskPushConfig(t.Context(), &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{ID: "a", URL: recv.URL + "/a", Token: "tok-a"}}); err != nil {
		t.Fatal(err)
	}
	// B sees the config A set.
	list, err := b.client.ListTaskPushConfig(t.Context(), &a2a.ListTaskPushConfigParams{TaskID: task.ID})
	if err != nil || len(list) != 1 || list[0].Config.URL != recv.URL+"/a" || list[0].Config.Token != "tok-a" {
		t.Fatalf("list on B: %+v, %v", list, err)
	}
	answer := &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.DataPart{Data: map[string]any{"url": "https://bread.dev"}})}
	done, err := b.client.SendMessage(t.Context(), answer)
	if err != nil || done.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the answer on B: %+v, %v", done, err)
	}
	<-rc.done["/a"]
	rc.mu.Lock()
	got, auth := strings.Join(rc.states["/a"], " "), rc.auth["/a"]
	rc.mu.Unlock()
	if got != "input-required working completed" || auth != "tok-a|" {
		t.Fatalf("/a got %q (auth %q), want input-required working completed", got, auth)
	}
	// The delivery of the terminal state drops the task's configs.
	st := core.NewStorage(storeA)
	for deadline := time.Now().Add(30 * time.Second); ; {
		subs, err := st.ListRunSubscriptions(t.Context(), string(task.ID))
		if err != nil {
			t.Fatal(err)
		}
		if len(subs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the finished task still has its configs: %+v", subs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
