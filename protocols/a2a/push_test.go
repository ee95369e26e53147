package a2a

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/webhook"
	"github.com/breadai/bread/stores/teststores"
)

// TestPushStore holds both keepers of push configs to one behaviour: the
// memory one, and the store's run subscriptions on every store.
func TestPushStore(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testPushConfigs(t, newMemPushConfigs(), "") })
	teststores.Each(t, func(t *testing.T, s teststores.Store) {
		st := core.NewStorage(s.Open(t))
		sess, err := st.CreateSession(t.Context(), core.NewSession{})
		if err != nil {
			t.Fatal(err)
		}
		testPushConfigs(t, &storedPushConfigs{st: st, mount: "/a2a"}, sess.ID)
		// Another mount of the task keeps its own configs.
		other := &storedPushConfigs{st: st, mount: "/a2a/v1"}
		if got, err := other.list(t.Context(), "t1"); err != nil || len(got) != 0 {
			t.Fatalf("another mount lists %+v, %v", got, err)
		}
	})
}

func testPushConfigs(t *testing.T, s pushConfigs, session string) {
	ctx := t.Context()
	list := func(task a2a.TaskID) []*a2a.PushConfig {
		t.Helper()
		got, err := s.list(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	remove := func(task a2a.TaskID, id string) bool {
		t.Helper()
		ok, err := s.remove(ctx, task, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	a, err := s.save(ctx, "t1", session, a2a.PushConfig{URL: "https://a"})
	if err != nil || a.ID == "" {
		t.Fatalf("save: %+v, %v", a, err)
	}
	if _, err := s.save(ctx, "t1", session, a2a.PushConfig{ID: "mine", URL: "https://b", Token: "tok", Auth: &a2a.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "c"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.save(ctx, "t1", session, a2a.PushConfig{ID: "mine", URL: "https://c", Token: "tok", Auth: &a2a.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "c"}}); err != nil {
		t.Fatal(err)
	}
	if got := list("t1"); len(got) != 2 || got[0].ID != a.ID || got[1].URL != "https://c" || got[1].Token != "tok" || got[1].Auth == nil || got[1].Auth.Credentials != "c" {
		t.Fatalf("list after replace: %+v", got)
	}
	if len(list("t2")) != 0 || remove("t2", "mine") {
		t.Fatal("another task sees t1's config")
	}
	if !remove("t1", "mine") || remove("t1", "mine") || len(list("t1")) != 1 {
		t.Fatal("remove")
	}
	for i := 1; i < maxPushConfigs; i++ {
		if _, err := s.save(ctx, "t1", session, a2a.PushConfig{URL: "https://x"}); err != nil {
			t.Fatalf("config %d: %v", i+1, err)
		}
	}
	if _, err := s.save(ctx, "t1", session, a2a.PushConfig{URL: "https://x"}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("a config over the limit: %v", err)
	}
	if err := s.forget(ctx, "t1"); err != nil || len(list("t1")) != 0 {
		t.Fatalf("forget: %v, %+v", err, list("t1"))
	}
}

func TestPushHeader(t *testing.T) {
	for _, c := range []struct {
		name      string
		cfg       a2a.PushConfig
		token     string
		auth      string
		supported bool
	}{
		{"none", a2a.PushConfig{}, "", "", true},
		{"token", a2a.PushConfig{Token: "tok"}, "tok", "", true},
		{"bearer", a2a.PushConfig{Auth: &a2a.PushAuthInfo{Schemes: []string{"bearer"}, Credentials: "abc"}}, "", "Bearer abc", true},
		{"first usable scheme", a2a.PushConfig{Auth: &a2a.PushAuthInfo{Schemes: []string{"OAuth2", "Basic"}, Credentials: "dTpw"}}, "", "Basic dTpw", true},
		{"unusable scheme", a2a.PushConfig{Auth: &a2a.PushAuthInfo{Schemes: []string{"OAuth2"}, Credentials: "x"}}, "", "", false},
		{"no credentials", a2a.PushConfig{Auth: &a2a.PushAuthInfo{Schemes: []string{"Bearer"}}}, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := pushHeader(&c.cfg)
			if h.Get("X-A2A-Notification-Token") != c.token || h.Get("Authorization") != c.auth || pushAuthSupported(&c.cfg) != c.supported {
				t.Fatalf("header %v, supported %v", h, pushAuthSupported(&c.cfg))
			}
		})
	}
}

// TestPusherDelivers: snapshots of one task reach its receiver signed, in
// order, with the config's token; an answer 500 is retried.
func TestPusherDelivers(t *testing.T) {
	var (
		mu     sync.Mutex
		states []a2a.TaskState
		calls  int
		done   = make(chan struct{})
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if err := webhook.Verify("s3cret", r.Header.Get(webhook.SignatureHeader), body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
		}
		if r.Header.Get("X-A2A-Notification-Token") != "tok" {
			t.Errorf("token header %q", r.Header.Get("X-A2A-Notification-Token"))
		}
		var task a2a.Task
		if err := json.Unmarshal(body, &task); err != nil {
			t.Errorf("body: %v", err)
		}
		states = append(states, task.Status.State)
		if task.Status.State.Terminal() {
			close(done)
		}
	}))
	defer recv.Close()
	send := webhook.New(webhook.Options{Secret: "s3cret", AllowPrivateNetworks: true, Backoff: time.Millisecond})
	defer send.Close()
	store := newMemPushConfigs()
	if _, err := store.save(t.Context(), "t1", "", a2a.PushConfig{URL: recv.URL, Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	p := newPusher(send, store, func(t *a2a.Task) ([]byte, error) { return json.Marshal(t) }, slog.New(slog.DiscardHandler))
	defer p.close()
	for _, s := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateWorking, a2a.TaskStateCompleted} {
		p.enqueue(&a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: s}})
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateWorking, a2a.TaskStateCompleted}
	if calls != 5 || len(states) != len(want) {
		t.Fatalf("%d calls, states %v", calls, states)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Fatalf("states %v, want %v", states, want)
		}
	}
}
