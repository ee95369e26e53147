package a2a_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	a2ap "github.com/breadai/bread/protocols/a2a"
	"github.com/breadai/bread/server"
)

// listed calls ListTasks and returns its result.
func listed(t *testing.T, n *normalizer, rpc string, params map[string]any, header http.Header) map[string]any {
	t.Helper()
	got := n.call(t, rpc, "ListTasks", params, header).(map[string]any)
	res, ok := got["result"].(map[string]any)
	if !ok {
		t.Fatalf("ListTasks(%v) answered %v", params, got)
	}
	return res
}

func taskIDs(res map[string]any) []string {
	var ids []string
	for _, task := range res["tasks"].([]any) {
		ids = append(ids, task.(map[string]any)["id"].(string))
	}
	return ids
}

// TestV1ListTasks: ListTasks pages the agent's tasks newest first with an
// opaque token, filters by context and state, counts them all, and refuses
// bad parameters with -32602; on every store.
func TestV1ListTasks(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		turns := []modeltest.Turn{}
		for range 5 {
			turns = append(turns, modeltest.Text("ok"))
		}
		s := v1Stack(t, open(t), scripted("assistant", turns...))
		rpc := s.url + "/a2a/v1"
		n := &normalizer{ids: map[string]string{}}
		var sent []string // oldest first
		for i := range 5 {
			msg := v1Text("hi")
			if i >= 3 {
				msg["message"].(map[string]any)["contextId"] = "ctx-b"
			}
			res := n.call(t, rpc, "SendMessage", msg, nil).(map[string]any)["result"].(map[string]any)["task"].(map[string]any)
			sent = append(sent, res["id"].(string))
		}
		newest := slices.Clone(sent)
		slices.Reverse(newest)

		var paged []string
		token := ""
		for range 5 {
			res := listed(t, n, rpc, map[string]any{"pageSize": 2, "pageToken": token}, nil)
			if res["totalSize"] != float64(5) || res["pageSize"] != float64(2) {
				t.Fatalf("totalSize %v, pageSize %v", res["totalSize"], res["pageSize"])
			}
			paged = append(paged, taskIDs(res)...)
			token, _ = res["nextPageToken"].(string)
			if token == "" {
				break
			}
		}
		if !slices.Equal(paged, newest) {
			t.Errorf("paged %v, want %v", paged, newest)
		}

		byContext := listed(t, n, rpc, map[string]any{"contextId": "ctx-b"}, nil)
		if got := taskIDs(byContext); !slices.Equal(got, newest[:2]) || byContext["totalSize"] != float64(2) {
			t.Errorf("contextId ctx-b lists %v (total %v), want %v", got, byContext["totalSize"], newest[:2])
		}
		if got := taskIDs(listed(t, n, rpc, map[string]any{"status": "TASK_STATE_COMPLETED", "pageSize": 100}, nil)); len(got) != 5 {
			t.Errorf("completed lists %v", got)
		}
		if got := taskIDs(listed(t, n, rpc, map[string]any{"status": 3}, nil)); len(got) != 5 {
			t.Errorf("state 3 (completed, by number) lists %v", got)
		}
		if got := taskIDs(listed(t, n, rpc, map[string]any{"status": "TASK_STATE_WORKING"}, nil)); len(got) != 0 {
			t.Errorf("working lists %v", got)
		}
		first := listed(t, n, rpc, map[string]any{"pageSize": 1, "includeArtifacts": true}, nil)["tasks"].([]any)[0].(map[string]any)
		if first["status"].(map[string]any)["state"] != "TASK_STATE_COMPLETED" || first["artifacts"] == nil {
			t.Errorf("a task listed with its artifacts: %v", first)
		}
		plain := listed(t, n, rpc, map[string]any{"pageSize": 1}, nil)["tasks"].([]any)[0].(map[string]any)
		if _, has := plain["artifacts"]; has {
			t.Errorf("artifacts listed without includeArtifacts: %v", plain)
		}
		if later := listed(t, n, rpc, map[string]any{"statusTimestampAfter": "2999-01-01T00:00:00Z"}, nil); len(taskIDs(later)) != 0 || later["totalSize"] != float64(0) {
			t.Errorf("tasks updated after 2999: %v", later)
		}

		for name, params := range map[string]map[string]any{
			"page size 0":   {"pageSize": 0},
			"page size 101": {"pageSize": 101},
			"bad token":     {"pageToken": "not-a-token"},
			"bad state":     {"status": "TASK_STATE_DREAMING"},
			"bad number":    {"status": 42},
			"bad time":      {"statusTimestampAfter": "yesterday"},
			"bad type":      {"pageSize": "two"},
		} {
			got := n.call(t, rpc, "ListTasks", params, nil).(map[string]any)
			e, _ := got["error"].(map[string]any)
			if e == nil || e["code"] != float64(-32602) {
				t.Errorf("%s: answered %v, want -32602", name, got)
			}
		}
	})
}

// TestV1ListTasksShowsOnlyTheCallersTasks: with auth, each identity lists
// the tasks it started and counts only those; Options.AuthorizeTask, when
// set, decides per task instead.
func TestV1ListTasksShowsOnlyTheCallersTasks(t *testing.T) {
	for _, custom := range []bool{false, true} {
		name := map[bool]string{false: "starter", true: "AuthorizeTask"}[custom]
		t.Run(name, func(t *testing.T) {
			opts := a2ap.Options{SpecVersion: a2ap.SpecV1, URL: "/a2a/v1", CardPath: "/.well-known/agent-card-v1.json"}
			if custom {
				// ann may see every task; others none.
				opts.AuthorizeTask = func(_ context.Context, id *core.AuthIdentity, _ string) bool { return id != nil && id.Subject == "ann" }
			}
			s := newStack(t, setup{opts: opts, agents: []*core.Agent{scripted("assistant", modeltest.Text("a"), modeltest.Text("b"), modeltest.Text("c"))},
				auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }},
			})
			rpc := s.url + "/a2a/v1"
			n := &normalizer{ids: map[string]string{}}
			as := func(user string) http.Header { return http.Header{"X-User": {user}} }
			for _, user := range []string{"ann", "ann", "bob"} {
				got := n.call(t, rpc, "SendMessage", v1Text("hi"), as(user)).(map[string]any)
				if got["result"] == nil {
					t.Fatalf("%s's message: %v", user, got)
				}
			}
			want := map[string]int{"ann": 2, "bob": 1, "eve": 0}
			if custom {
				want = map[string]int{"ann": 3, "bob": 0, "eve": 0}
			}
			for user, count := range want {
				res := listed(t, n, rpc, map[string]any{"pageSize": 1}, as(user))
				if res["totalSize"] != float64(count) || len(taskIDs(res)) != min(count, 1) {
					t.Errorf("%s lists %v of %v, want %d in all", user, taskIDs(res), res["totalSize"], count)
				}
				if next, _ := res["nextPageToken"].(string); (next != "") != (count > 1) {
					t.Errorf("%s's next page token %q with %d tasks", user, next, count)
				}
			}
		})
	}
}
