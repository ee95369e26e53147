package a2a_test

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	a2ap "github.com/breadai/bread/protocols/a2a"
)

var update = flag.Bool("update", false, "rewrite testdata/v1/*.golden")

// v1Stack serves agents over the v1.0 binding.
func v1Stack(t *testing.T, store core.BreadStore, agents ...*core.Agent) *stack {
	t.Helper()
	return newStack(t, setup{store: store, agents: agents, opts: a2ap.Options{SpecVersion: a2ap.SpecV1, URL: "/a2a/v1", CardPath: "/.well-known/agent-card-v1.json"}})
}

// normalizer replaces generated ids and times with stable names, so a
// response compares with a golden file.
type normalizer struct{ ids map[string]string }

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// name is the stable name of a generated id, given on first sight.
func (n *normalizer) name(id string) string {
	if _, seen := n.ids[id]; !seen {
		n.ids[id] = fmt.Sprintf("<uuid-%d>", len(n.ids)+1)
	}
	return n.ids[id]
}

func (n *normalizer) walk(v any) any {
	switch x := v.(type) {
	case string:
		return uuidRE.ReplaceAllStringFunc(x, n.name)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			val := x[k]
			switch k {
			case "timestamp":
				x[k] = "<time>"
				continue
			case "url":
				if s, ok := val.(string); ok && strings.HasPrefix(s, "http://127.0.0.1:") {
					x[k] = "<base>" + s[strings.Index(s[len("http://"):], "/")+len("http://"):]
					continue
				}
			}
			x[k] = n.walk(val)
		}
	case []any:
		for i := range x {
			x[i] = n.walk(x[i])
		}
	}
	return v
}

// call sends one v1.0 request; a stream answers with its envelopes.
func (n *normalizer) call(t *testing.T, url, method string, params any, header http.Header) any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	return n.post(t, url, string(body), header)
}

func (n *normalizer) post(t *testing.T, url, body string, header http.Header) any {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
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
			t.Fatal(err)
		}
		return n.walk(v)
	}
	var evs []any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, n.walk(v))
	}
	return map[string]any{"sse": evs}
}

// golden compares got with testdata/v1/name.golden (-update rewrites it).
func golden(t *testing.T, name string, got any) {
	t.Helper()
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(got); err != nil {
		t.Fatal(err)
	}
	b := []byte(buf.String())
	path := filepath.Join("testdata", "v1", name+".golden")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != string(b) {
		t.Errorf("%s differs from %s:\n%s", name, path, b)
	}
}

func v1Text(text string) map[string]any {
	return map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}
}

// TestV1Golden drives every v1.0 method over a real socket and compares
// each response, ids and times normalized, with a golden file.
func TestV1Golden(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		a := scripted("assistant", modeltest.Text("Hel", "lo"), modeltest.Text("again"))
		a.Description = "Greets."
		s := v1Stack(t, open(t), a)
		rpc := s.url + "/a2a/v1"
		n := &normalizer{ids: map[string]string{}}

		res, err := http.Get(s.url + "/.well-known/agent-card-v1.json")
		if err != nil {
			t.Fatal(err)
		}
		var card any
		_ = json.NewDecoder(res.Body).Decode(&card)
		res.Body.Close()
		golden(t, "card", n.walk(card))

		sent := n.call(t, rpc, "SendMessage", v1Text("hi"), nil)
		golden(t, "send_message", sent)
		task := sent.(map[string]any)["result"].(map[string]any)["task"].(map[string]any)
		taskID := key(n, task["id"].(string))

		golden(t, "get_task", n.call(t, rpc, "GetTask", map[string]any{"id": taskID}, nil))
		golden(t, "send_streaming_message", n.call(t, rpc, "SendStreamingMessage", v1Text("again"), nil))

		errs := map[string]any{
			"parse":                 n.post(t, rpc, "{", nil),
			"invalid_request":       n.post(t, rpc, `{"jsonrpc":"1.0","id":1,"method":"GetTask"}`, nil),
			"method_not_found":      n.call(t, rpc, "message/send", v1Text("hi"), nil),
			"invalid_params":        n.call(t, rpc, "SendMessage", map[string]any{"message": map[string]any{"messageId": "m", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "a", "url": "b"}}}}, nil),
			"task_not_found":        n.call(t, rpc, "GetTask", map[string]any{"id": "nope"}, nil),
			"not_cancelable":        n.call(t, rpc, "CancelTask", map[string]any{"id": taskID}, nil),
			"subscribe_finished":    n.call(t, rpc, "SubscribeToTask", map[string]any{"id": taskID}, nil),
			"push_not_supported":    n.call(t, rpc, "CreateTaskPushNotificationConfig", map[string]any{"taskId": taskID, "url": "https://x"}, nil),
			"version_not_supported": n.call(t, rpc, "GetTask", map[string]any{"id": taskID}, http.Header{"A2A-Version": {"0.3"}}),
		}
		golden(t, "errors", errs)
	})
}

// key is the original id behind a normalized name.
func key(n *normalizer, name string) string {
	for k, v := range n.ids {
		if v == name {
			return k
		}
	}
	return name
}

// TestV1InputRequiredAndResume: TASK_STATE_INPUT_REQUIRED ends the stream;
// the answer, a SendMessage on the task, completes it.
func TestV1InputRequiredAndResume(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := v1Stack(t, open(t), humanAgent(modeltest.ToolCall("human_confirm", map[string]string{"url": "https://bread.dev"}), modeltest.Text("Published.")))
		rpc := s.url + "/a2a/v1"
		n := &normalizer{ids: map[string]string{}}
		asked := n.call(t, rpc, "SendStreamingMessage", v1Text("publish"), nil)
		golden(t, "input_required", asked)
		first := asked.(map[string]any)["sse"].([]any)[0].(map[string]any)["result"].(map[string]any)["task"].(map[string]any)
		taskID := key(n, first["id"].(string))
		got := n.call(t, rpc, "GetTask", map[string]any{"id": taskID}, nil)
		if st := got.(map[string]any)["result"].(map[string]any)["status"].(map[string]any)["state"]; st != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("GetTask state %v", st)
		}
		answer := map[string]any{"message": map[string]any{"messageId": "m2", "role": "ROLE_USER", "taskId": taskID,
			"parts": []any{map[string]any{"data": map[string]any{"url": "https://bread.dev"}}}}}
		golden(t, "answer", n.call(t, rpc, "SendMessage", answer, nil))
	})
}

// sseReader reads JSON-RPC envelopes off an SSE response, one at a time.
type sseReader struct {
	res *http.Response
	sc  *bufio.Scanner
}

func openSSE(t *testing.T, url, method string, params any) *sseReader {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	return &sseReader{res: res, sc: sc}
}

// next is the next envelope, nil at the end of the stream.
func (r *sseReader) next(t *testing.T) map[string]any {
	t.Helper()
	for r.sc.Scan() {
		if data, ok := strings.CutPrefix(r.sc.Text(), "data: "); ok {
			var v map[string]any
			if err := json.Unmarshal([]byte(data), &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return nil
}

// TestV1CancelAndSubscribe: SubscribeToTask re-attaches to a working task
// (the task, then the text so far); CancelTask ends it TASK_STATE_CANCELED
// on both streams.
func TestV1CancelAndSubscribe(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := v1Stack(t, open(t), scripted("assistant", modeltest.Block(nil, "work")))
		rpc := s.url + "/a2a/v1"
		run := openSSE(t, rpc, "SendStreamingMessage", v1Text("go"))
		first := run.next(t)
		taskID := first["result"].(map[string]any)["task"].(map[string]any)["id"].(string)
		run.next(t) // the artifact update: the run is blocked in its model call
		n := &normalizer{ids: map[string]string{}}
		sub := openSSE(t, rpc, "SubscribeToTask", map[string]any{"id": taskID})
		var got []any
		for range 2 { // the task, then the text so far
			got = append(got, n.walk(sub.next(t)))
		}
		canceled := n.call(t, rpc, "CancelTask", map[string]any{"id": taskID}, nil)
		// The artifacts so far are there once the text reached the crumb log
		// (its delta window closes at 1 s): not part of the golden shape.
		delete(canceled.(map[string]any)["result"].(map[string]any), "artifacts")
		golden(t, "cancel", canceled)
		for ev := sub.next(t); ev != nil; ev = sub.next(t) {
			got = append(got, n.walk(ev))
		}
		golden(t, "subscribe_canceled", map[string]any{"sse": got})
		var last map[string]any
		for ev := run.next(t); ev != nil; ev = run.next(t) {
			last = ev
		}
		b, _ := json.Marshal(last)
		if !strings.Contains(string(b), `"TASK_STATE_CANCELED"`) {
			t.Fatalf("the stream ended with %s", b)
		}
	})
}
