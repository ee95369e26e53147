package a2a_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// restCall sends one HTTP+JSON request (body nil: none) and decodes the
// answer: a JSON value, or {"sse": [events]} for an event stream, each
// event {"event"?: name, "data": value}. It returns the HTTP status too.
func (n *normalizer) restCall(t *testing.T, method, url string, body any, header http.Header) (int, any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" {
		var v any
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
			t.Fatalf("%s %s: %d: %v", method, url, res.StatusCode, err)
		}
		return res.StatusCode, n.walk(v)
	}
	var evs []any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	ev := map[string]any{}
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			ev["event"] = name
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var v any
			if err := json.Unmarshal([]byte(data), &v); err != nil {
				t.Fatal(err)
			}
			ev["data"] = n.walk(v)
			evs = append(evs, ev)
			ev = map[string]any{}
		}
	}
	return res.StatusCode, map[string]any{"sse": evs}
}

// result is the result of a JSON-RPC envelope, failing on an error.
func result(t *testing.T, env any) any {
	t.Helper()
	m, _ := env.(map[string]any)
	if m["error"] != nil {
		t.Fatalf("JSON-RPC error: %v", m["error"])
	}
	return m["result"]
}

// TestRESTAnswersAsJSONRPC: the HTTP+JSON binding of a v1.0 mount answers
// every operation as the JSON-RPC binding does (both call the same
// operations), on every store: a task sent on one binding reads the same
// on both, ListTasks pages alike, a REST stream is the JSON-RPC stream's
// results, and each error has the spec's HTTP status beside the ErrorInfo
// the JSON-RPC error carries.
func TestRESTAnswersAsJSONRPC(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := v1Stack(t, open(t), scripted("assistant", modeltest.Text("Hel", "lo"), modeltest.Text("again"), modeltest.Text("third")))
		rpc, rest := s.url+"/a2a/v1", s.url+"/a2a/v1"
		n := &normalizer{ids: map[string]string{}}

		// Sent over JSON-RPC, read over both.
		sent := result(t, n.call(t, rpc, "SendMessage", v1Text("hi"), nil)).(map[string]any)["task"].(map[string]any)
		id := key(n, sent["id"].(string))
		viaRPC := result(t, n.call(t, rpc, "GetTask", map[string]any{"id": id}, nil))
		code, viaREST := n.restCall(t, http.MethodGet, rest+"/tasks/"+id, nil, nil)
		if code != http.StatusOK || !reflect.DeepEqual(viaRPC, viaREST) {
			t.Fatalf("GET /tasks/{id} = %d %v\nGetTask = %v", code, viaREST, viaRPC)
		}

		// Sent over REST, read over both; the answer is the JSON-RPC
		// result's shape.
		code, restSent := n.restCall(t, http.MethodPost, rest+"/message:send", v1Text("again"), nil)
		if code != http.StatusOK {
			t.Fatalf("POST /message:send = %d %v", code, restSent)
		}
		task := restSent.(map[string]any)["task"].(map[string]any)
		id2 := key(n, task["id"].(string))
		if st := task["status"].(map[string]any)["state"]; st != "TASK_STATE_COMPLETED" {
			t.Fatalf("REST send: %v", restSent)
		}
		_, restGot := n.restCall(t, http.MethodGet, rest+"/tasks/"+id2+"?historyLength=0", nil, nil)
		if rpcGot := result(t, n.call(t, rpc, "GetTask", map[string]any{"id": id2}, nil)); !reflect.DeepEqual(rpcGot, restGot) {
			t.Fatalf("REST-sent task: GET %v\nGetTask %v", restGot, rpcGot)
		}

		// ListTasks pages alike on both bindings.
		_, page := n.restCall(t, http.MethodGet, rest+"/tasks?pageSize=1&status=TASK_STATE_COMPLETED", nil, nil)
		rpcPage := result(t, n.call(t, rpc, "ListTasks", map[string]any{"pageSize": 1, "status": "TASK_STATE_COMPLETED"}, nil))
		if !reflect.DeepEqual(page, rpcPage) || page.(map[string]any)["totalSize"] != float64(2) || page.(map[string]any)["nextPageToken"] == "" {
			t.Fatalf("GET /tasks = %v\nListTasks = %v", page, rpcPage)
		}
		next := page.(map[string]any)["nextPageToken"].(string)
		_, page2 := n.restCall(t, http.MethodGet, rest+"/tasks?pageSize=1&status=completed&pageToken="+next, nil, nil)
		if tasks := page2.(map[string]any)["tasks"].([]any); len(tasks) != 1 || tasks[0].(map[string]any)["id"] != sent["id"] {
			t.Fatalf("second page (state by its short name) = %v", page2)
		}

		// A REST stream carries the StreamResponses the JSON-RPC stream's
		// envelopes hold.
		_, streamed := n.restCall(t, http.MethodPost, rest+"/message:stream", v1Text("third"), nil)
		evs := streamed.(map[string]any)["sse"].([]any)
		if len(evs) < 3 {
			t.Fatalf("stream: %v", streamed)
		}
		first := evs[0].(map[string]any)["data"].(map[string]any)
		last := evs[len(evs)-1].(map[string]any)["data"].(map[string]any)
		if first["task"] == nil || last["statusUpdate"].(map[string]any)["status"].(map[string]any)["state"] != "TASK_STATE_COMPLETED" {
			t.Fatalf("stream: %v", streamed)
		}

		// Errors: the HTTP status of the spec's table, an AIP-193 body, and
		// the JSON-RPC error's ErrorInfo.
		for _, c := range []struct {
			name, method, path string
			body               any
			header             http.Header
			status             int
			reason             string
			rpcMethod          string
			rpcParams          any
		}{
			{"unknown task", http.MethodGet, "/tasks/nope", nil, nil, 404, "TASK_NOT_FOUND", "GetTask", map[string]any{"id": "nope"}},
			{"cancel a finished task", http.MethodPost, "/tasks/" + id + ":cancel", nil, nil, 409, "TASK_NOT_CANCELABLE", "CancelTask", map[string]any{"id": id}},
			{"subscribe to a finished task", http.MethodPost, "/tasks/" + id + ":subscribe", nil, nil, 400, "UNSUPPORTED_OPERATION", "SubscribeToTask", map[string]any{"id": id}},
			{"subscribe by GET", http.MethodGet, "/tasks/" + id + ":subscribe", nil, nil, 400, "UNSUPPORTED_OPERATION", "SubscribeToTask", map[string]any{"id": id}},
			{"page size", http.MethodGet, "/tasks?pageSize=101", nil, nil, 400, "INVALID_PARAMS", "ListTasks", map[string]any{"pageSize": 101}},
			{"bad part", http.MethodPost, "/message:send", map[string]any{"message": map[string]any{"messageId": "m", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "a", "url": "b"}}}}, nil, 400, "INVALID_PARAMS", "", nil},
			{"push not supported", http.MethodPost, "/tasks/" + id + "/pushNotificationConfigs", map[string]any{"url": "https://x"}, nil, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED", "CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "url": "https://x"}},
			{"no extended card", http.MethodGet, "/extendedAgentCard", nil, nil, 400, "UNSUPPORTED_OPERATION", "GetExtendedAgentCard", map[string]any{}},
			{"version", http.MethodGet, "/tasks/" + id, nil, http.Header{"A2A-Version": {"0.3"}}, 400, "VERSION_NOT_SUPPORTED", "", nil},
			{"unknown verb", http.MethodPost, "/tasks/" + id + ":pause", nil, nil, 404, "", "", nil},
			{"method not allowed", http.MethodDelete, "/tasks/" + id, nil, nil, 405, "", "", nil},
		} {
			code, got := n.restCall(t, c.method, rest+c.path, c.body, c.header)
			e, _ := got.(map[string]any)["error"].(map[string]any)
			if code != c.status || e == nil || e["code"] != float64(c.status) || e["status"] == "" || e["message"] == "" {
				t.Errorf("%s: %d %v", c.name, code, got)
				continue
			}
			if c.reason == "" {
				continue
			}
			details, _ := e["details"].([]any)
			if len(details) != 1 || details[0].(map[string]any)["reason"] != c.reason {
				t.Errorf("%s: details %v, want reason %s", c.name, details, c.reason)
			}
			if c.rpcMethod == "" {
				continue
			}
			// A stream refused before its first event is a plain envelope.
			rpcErr, _ := n.call(t, rpc, c.rpcMethod, c.rpcParams, nil).(map[string]any)["error"].(map[string]any)
			if rpcErr == nil || !reflect.DeepEqual(rpcErr["data"], e["details"]) {
				t.Errorf("%s: JSON-RPC error %v, REST details %v", c.name, rpcErr, e["details"])
			}
		}
	})
}
