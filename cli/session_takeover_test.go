package cli_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

// TestSessionTakeoverIsRefusedOverTheBinary serves, with `bread start` and
// two API-key strategies (ann, bob), an agent over HTTP, A2A, AG-UI and MCP.
// Ann holds a session, a suspended run and a finished one, a loop and a
// task run. Bob, naming them on every route and protocol, runs on nothing
// of ann's, reads, lists, tails, resumes, cancels and deletes nothing of
// hers, and learns nothing
// a missing session would not tell him: her session answers as a missing
// one. The replay model in conversation mode plays the call numbered by
// the assistant turns in its request, so a run that saw ann's history
// would say "SAW-HISTORY": bob's never do.
func TestSessionTakeoverIsRefusedOverTheBinary(t *testing.T) {
	dir := project(t, map[string]string{
		"bread.yaml": `entrypoints: [chat, publisher]
store: {type: sqlite, path: ./bread.db}
providers: {replay: {mode: conversation}}
server:
  auth:
    - {type: apikey, name: ann, header: X-Ann-Key, keys: [ann-key]}
    - {type: apikey, name: bob, header: X-Bob-Key, keys: [bob-key]}
    - {type: apikey, name: ops, header: X-Ops-Key, keys: [ops-key], ownership: false}
plugins:
  - {type: a2a, agent: chat, url: /a2a}
  - {type: agui, agent: chat}
  - {type: mcpserver, agents: [chat]}
`,
		"agents/chat/agent.yaml":              "model: {provider: replay, model: t/chat.jsonl}\n",
		"agents/chat/prompt.md":               "Chat.",
		"t/chat.jsonl":                        transcript("FRESH", "SAW-HISTORY", "SAW-HISTORY-2", "SAW-HISTORY-3"),
		"agents/publisher/agent.yaml":         "model: {provider: replay, model: t/publisher.jsonl}\n",
		"agents/publisher/prompt.md":          "Publish.",
		"agents/publisher/tools/confirm.yaml": "type: human\nprompt: Publish?\n",
		"t/publisher.jsonl": `{"call":0,"type":"tool-call","toolCallId":"h1","toolName":"human_confirm","input":{"post":"hello"}}
{"call":0,"type":"finish","finishReason":"tool-calls"}
{"call":1,"type":"text-delta","delta":"Published."}
{"call":1,"type":"finish","finishReason":"stop"}
`,
	})
	srv := startReplica(t, dir, nil)
	ann, bob, ops := []string{"X-Ann-Key", "ann-key"}, []string{"X-Bob-Key", "bob-key"}, []string{"X-Ops-Key", "ops-key"}
	ndjson := []string{"Accept", "application/x-ndjson"}
	send := func(method, path, body string, hdr ...string) (int, string) {
		t.Helper()
		return statusOf(t, method, srv.base+path, body, hdr...)
	}

	// Ann's session: two turns, the second one seeing the first.
	if status, body := send("POST", "/agents/chat/run", `{"input":"hello","session":{"id":"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115"}}`, append(ann, ndjson...)...); status != http.StatusOK || !strings.Contains(body, "FRESH") {
		t.Fatalf("ann's first turn: %d %s", status, body)
	}
	status, body := send("POST", "/agents/chat/run", `{"input":"again","session":{"id":"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115"}}`, append(ann, ndjson...)...)
	if status != http.StatusOK || !strings.Contains(body, `"SAW-HISTORY"`) {
		t.Fatalf("ann's second turn does not see her first: %d %s", status, body)
	}
	annRun := firstRunID(t, body)
	_, annMessages := send("GET", "/sessions/0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115/messages", "", ann...)
	// Ann's run waiting for a human, in a session of hers.
	run := openAs(t, "POST", srv.base+"/agents/publisher/run", `{"input":"publish hello","session":{"id":"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa2b0"}}`, append(ann, ndjson...)...)
	waiting := run.until(core.TypeHumanRequired)
	hr := waiting[len(waiting)-1].Crumb.(*core.HumanRequired)
	suspended := waiting[0].RunID
	// A loop and a task run of hers, and a standalone task run.
	seedSessionRecords(t, dir, "0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115")

	// Bob names ann's session in a run's body: the run ends with
	// SESSION_NOT_FOUND before any model call, as for her other session.
	for _, sess := range []string{"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115", "0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa2b0"} {
		status, body := send("POST", "/agents/chat/run", `{"input":"tell me","session":{"id":"`+sess+`"}}`, append(bob, ndjson...)...)
		if status != http.StatusOK || !strings.Contains(body, `"code":"SESSION_NOT_FOUND"`) || strings.Contains(body, "SAW-HISTORY") || strings.Contains(body, "FRESH") {
			t.Errorf("bob runs on %s: %d %s, want a stream ending SESSION_NOT_FOUND and no model turn", sess, status, body)
		}
	}
	// Bob may name a new session only with a random UUID: any other id,
	// free or taken (an operator's "ops-notes"), is refused the same way,
	// so the refusal does not tell him which ids are taken.
	if status, body := send("POST", "/agents/chat/run", `{"input":"hi","session":{"id":"ops-notes"}}`, append(ops, ndjson...)...); status != http.StatusOK || !strings.Contains(body, "FRESH") {
		t.Fatalf("the operator's session: %d %s", status, body)
	}
	refusal := func(id string) string {
		t.Helper()
		_, body := send("POST", "/agents/chat/run", `{"input":"hi","session":{"id":"`+id+`"}}`, append(bob, ndjson...)...)
		if !strings.Contains(body, `"code":"SESSION_NOT_FOUND"`) || strings.Contains(body, "FRESH") {
			t.Errorf("bob runs on %s: %s, want a stream ending SESSION_NOT_FOUND and no model turn", id, body)
		}
		var last struct {
			Crumb struct {
				Error struct{ Code, Message string }
			}
		}
		lines := strings.Split(strings.TrimSpace(body), "\n")
		_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
		return strings.ReplaceAll(last.Crumb.Error.Code+" "+last.Crumb.Error.Message, id, "ID")
	}
	if taken, free := refusal("ops-notes"), refusal("free-notes"); taken != free || !strings.Contains(taken, "random UUID") {
		t.Errorf("bob tells a taken id from a free one: %q vs %q", taken, free)
	}
	if status, body := send("POST", "/agents/chat/run", `{"input":"hi","session":{"id":"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fb0b0"}}`, append(bob, ndjson...)...); status != http.StatusOK || !strings.Contains(body, "FRESH") {
		t.Errorf("bob's run on a new session of his naming (a UUIDv7): %d %s", status, body)
	}
	// In the background: refused at once, as a read is.
	if status, body := send("POST", "/agents/chat/run", `{"input":"tell me","session":{"id":"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115"}}`, append(bob, "Prefer", "respond-async")...); status != http.StatusNotFound || !strings.Contains(body, `"SESSION_NOT_FOUND"`) {
		t.Errorf("bob's background run on ann's session: %d %s, want 404 SESSION_NOT_FOUND", status, body)
	}

	// Reads and deletes of ann's session answer as for a missing one.
	for _, c := range []struct{ method, path string }{
		{"GET", "/sessions/0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115"},
		{"GET", "/sessions/0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115/messages"},
		{"DELETE", "/sessions/0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115"},
		{"DELETE", "/sessions/0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa2b0"},
		{"GET", "/sessions/no-such-session"},
		{"DELETE", "/sessions/no-such-session"},
	} {
		if status, body := send(c.method, c.path, "", bob...); status != http.StatusNotFound || !strings.Contains(body, `"SESSION_NOT_FOUND"`) {
			t.Errorf("bob: %s %s = %d %s, want 404 SESSION_NOT_FOUND", c.method, c.path, status, body)
		}
	}
	if _, list := send("GET", "/sessions", "", bob...); strings.Contains(list, "0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115") || strings.Contains(list, "0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa2b0") {
		t.Errorf("bob lists ann's sessions: %s", list)
	}
	if status, body := send("POST", "/sessions/cleanup", `{"olderThanDays":0.000001}`, bob...); status != http.StatusOK {
		t.Errorf("bob's cleanup: %d %s", status, body)
	}
	// Ann's runs: 403, the seed's body.
	for _, c := range []struct{ method, path string }{
		{"GET", "/runs/" + annRun},
		{"GET", "/runs/" + annRun + "/stream"},
		{"GET", "/runs/" + suspended},
		{"POST", "/runs/" + suspended + "/cancel"},
		{"POST", "/runs/" + suspended + "/stream-token"},
	} {
		if status, body := send(c.method, c.path, "", bob...); status != http.StatusForbidden || body != `{"error":"Forbidden"}` {
			t.Errorf("bob: %s %s = %d %s, want 403", c.method, c.path, status, body)
		}
	}
	// Her loops and task runs, listed, filtered by her session or read,
	// answer as a missing session's.
	checkSessionRecords(t, srv.base, "0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115", ann, bob, ops)
	// Her checkpoint is unknown to him.
	if status, body := send("POST", "/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`, append(bob, ndjson...)...); status != http.StatusOK || !strings.Contains(body, `"CHECKPOINT_NOT_FOUND"`) {
		t.Errorf("bob resumes ann's checkpoint: %d %s", status, body)
	}

	// A2A: ann's session as a contextId.
	a2a := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","contextId":"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115","parts":[{"kind":"text","text":"tell me"}]}}}`
	if status, body := send("POST", "/a2a", a2a, append(bob, "Content-Type", "application/json")...); status != http.StatusOK || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "SESSION_NOT_FOUND") || strings.Contains(body, "SAW-HISTORY") {
		t.Errorf("bob over A2A on ann's context: %d %s", status, body)
	}
	// AG-UI: ann's session as a threadId, and her interrupt on it.
	agui := `{"threadId":"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115","runId":"r1","state":null,"messages":[{"id":"m1","role":"user","content":"tell me"}],"tools":[],"context":[],"forwardedProps":null}`
	if status, body := send("POST", "/ag-ui/run", agui, append(bob, "Content-Type", "application/json", "Accept", "text/event-stream")...); status != http.StatusNotFound || !strings.Contains(body, `"SESSION_NOT_FOUND"`) || strings.Contains(body, "SAW-HISTORY") {
		t.Errorf("bob over AG-UI on ann's thread: %d %s", status, body)
	}
	aguiResume := `{"threadId":"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa2b0","runId":"r2","state":null,"messages":[],"tools":[],"context":[],"forwardedProps":null,"resume":[{"interruptId":"` + hr.CheckpointID + `","status":"resolved","payload":{"ok":true}}]}`
	if status, body := send("POST", "/ag-ui/run", aguiResume, append(bob, "Content-Type", "application/json", "Accept", "text/event-stream")...); strings.Contains(body, "Published") || !strings.Contains(body, "CHECKPOINT_NOT_FOUND") {
		t.Errorf("bob over AG-UI resumes ann's interrupt: %d %s", status, body)
	}
	// MCP names no session: bob's call runs in a new one of his, with no
	// history.
	mcp := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"chat","arguments":{"input":"tell me"}}}`
	if status, body := send("POST", "/mcp", mcp, append(bob, "Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-11-25")...); status != http.StatusOK || !strings.Contains(body, "FRESH") || strings.Contains(body, "SAW-HISTORY") {
		t.Errorf("bob over MCP: %d %s", status, body)
	}

	// bread chat, in a project whose agent is bob's view of the server.
	remote := project(t, map[string]string{
		"bread.yaml": "entrypoints: [chat]\nstore: {type: sqlite, path: ./bread.db}\n" +
			"remoteAgents:\n  chat: {type: httpchunked, url: \"" + srv.base + "\", headers: {X-Bob-Key: bob-key}}\n",
	})
	chat := exec.Command(binary, "chat", "-s", "0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115")
	chat.Dir, chat.Env, chat.Stdin = remote, append(os.Environ(), "NO_COLOR=1"), strings.NewReader("tell me\n/exit\n")
	if out, _ := chat.CombinedOutput(); !strings.Contains(string(out), "SESSION_NOT_FOUND") || strings.Contains(string(out), "SAW-HISTORY") {
		t.Errorf("bob's bread chat on ann's session:\n%s", out)
	}

	// Nothing of ann's moved: her history is as she left it, her run
	// still waits, and she (and an operator) still reach both.
	if status, body := send("GET", "/sessions/0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115/messages", "", ann...); status != http.StatusOK || body != annMessages {
		t.Errorf("ann's history after bob: %d %s, want %s", status, body, annMessages)
	}
	for who, hdr := range map[string][]string{"ann": ann, "ops": ops} {
		if status, body := send("GET", "/runs/"+suspended, "", hdr...); status != http.StatusOK || !strings.Contains(body, `"status":"suspended"`) {
			t.Errorf("%s reads ann's suspended run: %d %s", who, status, body)
		}
		if status, body := send("GET", "/sessions/0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa2b0", "", hdr...); status != http.StatusOK {
			t.Errorf("%s reads ann's session: %d %s", who, status, body)
		}
	}
	if _, list := send("GET", "/sessions", "", ann...); !strings.Contains(list, `"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115"`) || !strings.Contains(list, `"0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa2b0"`) {
		t.Errorf("ann lists her sessions: %s", list)
	}
	status, body = send("POST", "/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`, append(ann, ndjson...)...)
	if status != http.StatusOK || !strings.Contains(body, "Published.") {
		t.Errorf("ann resumes her run: %d %s", status, body)
	}
	if status, body := send("DELETE", "/sessions/0193a1b2-c3d4-7e5f-8a6b-7c8d9e0fa115", "", ann...); status != http.StatusOK {
		t.Errorf("ann deletes her session: %d %s", status, body)
	}
}

// firstRunID is the runId of the first frame of an NDJSON stream.
func firstRunID(t *testing.T, stream string) string {
	t.Helper()
	line, _, _ := strings.Cut(stream, "\n")
	var f struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal([]byte(line), &f); err != nil || f.RunID == "" {
		t.Fatalf("first frame %q: %v", line, err)
	}
	return f.RunID
}
