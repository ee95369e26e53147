package examplestest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// rpc posts one JSON-RPC request to url and decodes the response: the
// result, or the error.
func rpc(t *testing.T, url, method string, params any) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	res, err := http.Post(url, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return out.Result, out.Error
}

// rpcStream posts a streaming request and returns the result of every SSE
// envelope.
func rpcStream(t *testing.T, url, method string, params any) []map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("%s: Content-Type %q", method, ct)
	}
	var out []map[string]any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var env struct {
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &env); err != nil || env.Error != nil {
			t.Fatalf("%s: envelope %s (%v)", method, data, err)
		}
		out = append(out, env.Result)
	}
	return out
}

func userMessage(parts ...map[string]any) map[string]any {
	ps := make([]any, len(parts))
	for i, p := range parts {
		ps[i] = p
	}
	return map[string]any{"kind": "message", "messageId": "m-" + strings.Repeat("x", len(parts)), "role": "user", "parts": ps}
}

// taskText is the text of a task's artifacts.
func taskText(task map[string]any) string {
	var b strings.Builder
	arts, _ := task["artifacts"].([]any)
	for _, a := range arts {
		parts, _ := a.(map[string]any)["parts"].([]any)
		for _, p := range parts {
			if s, ok := p.(map[string]any)["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

func state(task map[string]any) string {
	st, _ := task["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

// TestA2A serves the server project over A2A and drives it with plain
// JSON-RPC (as any A2A client would), then runs the client project, whose
// `baker` is the server's agent reached over A2A.
func TestA2A(t *testing.T) {
	t.Parallel()
	serverDir := copyExample(t, "a2a/server")
	srv := startServer(t, serverDir, nil)
	answer := transcriptText(t, filepath.Join(serverDir, "transcripts/baker.jsonl"), 0)

	t.Run("the Agent Card names the endpoint", func(t *testing.T) {
		res, err := http.Get(srv.URL + "/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		var card map[string]any
		_ = json.NewDecoder(res.Body).Decode(&card)
		res.Body.Close()
		if card["name"] != "baker" || card["url"] != srv.URL+"/a2a" || card["protocolVersion"] != "0.3.0" {
			t.Fatalf("card = %v", card)
		}
	})
	t.Run("message/send, then tasks/get", func(t *testing.T) {
		task, rpcErr := rpc(t, srv.URL+"/a2a", "message/send", map[string]any{"message": userMessage(map[string]any{"kind": "text", "text": "Why does sourdough rise?"})})
		if rpcErr != nil || state(task) != "completed" || taskText(task) != answer {
			t.Fatalf("task %v, error %v", task, rpcErr)
		}
		got, rpcErr := rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": task["id"]})
		if rpcErr != nil || state(got) != "completed" || got["contextId"] != task["contextId"] {
			t.Fatalf("tasks/get %v, error %v", got, rpcErr)
		}
	})
	t.Run("message/stream", func(t *testing.T) {
		evs := rpcStream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": userMessage(map[string]any{"kind": "text", "text": "Why?"})})
		var kinds []string
		var text strings.Builder
		for _, ev := range evs {
			kinds = append(kinds, ev["kind"].(string))
			if ev["kind"] == "artifact-update" {
				text.WriteString(taskText(map[string]any{"artifacts": []any{ev["artifact"]}}))
			}
		}
		if strings.Join(kinds, " ") != "task artifact-update artifact-update status-update" || text.String() != answer {
			t.Fatalf("events %v, text %q", kinds, text.String())
		}
	})
	t.Run("input-required, answered by a follow-up message", func(t *testing.T) {
		url := srv.URL + "/a2a/editor"
		evs := rpcStream(t, url, "message/stream", map[string]any{"message": userMessage(map[string]any{"kind": "text", "text": "Title my post on sourdough."})})
		last := evs[len(evs)-1]
		if state(last) != "input-required" || last["final"] != true {
			t.Fatalf("the stream ends with %v", last)
		}
		taskID := evs[0]["id"]
		msg := userMessage(map[string]any{"kind": "data", "data": map[string]any{"title": "Why sourdough rises"}})
		msg["taskId"] = taskID
		task, rpcErr := rpc(t, url, "message/send", map[string]any{"message": msg})
		// The task goes on where it stopped: its text is all the run said.
		editor := filepath.Join(serverDir, "transcripts/editor.jsonl")
		said := transcriptText(t, editor, 0) + transcriptText(t, editor, 1)
		if rpcErr != nil || state(task) != "completed" || task["id"] != taskID || taskText(task) != said {
			t.Fatalf("task %v, error %v", task, rpcErr)
		}
	})
	t.Run("the client project delegates to the server over A2A", func(t *testing.T) {
		r := mustBread(t, invocation{dir: copyExample(t, "a2a/client"), env: map[string]string{"A2A_URL": srv.URL}, args: []string{"invoke", "baker", "Why does sourdough rise?"}})
		if strings.TrimSpace(r.stdout) != answer {
			t.Fatalf("stdout %q, want %q", r.stdout, answer)
		}
	})
}
