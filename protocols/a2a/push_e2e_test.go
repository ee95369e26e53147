package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine/webhook"
	a2ap "github.com/breadai/bread/protocols/a2a"
)

// pushReceiver records, per path, the states delivered to it; its first
// delivery is answered 500 (the sender must retry it).
type pushReceiver struct {
	t      *testing.T
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
	var task a2a.Task
	if err := json.Unmarshal(body, &task); err != nil {
		rc.t.Errorf("%s: body %s: %v", r.URL.Path, body, err)
	}
	rc.states[r.URL.Path] = append(rc.states[r.URL.Path], string(task.Status.State))
	rc.auth[r.URL.Path] = r.Header.Get("X-A2A-Notification-Token") + "|" + r.Header.Get("Authorization")
	if task.Status.State.Terminal() {
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
