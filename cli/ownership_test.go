package cli_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// openAs opens a streamed request with headers (name, value pairs) and
// fails unless it answers 200.
func openAs(t *testing.T, method, u, body string, hdr ...string) *frames {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, u, rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %s", method, u, resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &frames{t: t, resp: resp, sc: sc}
}

// statusOf sends one request and returns its status and body.
func statusOf(t *testing.T, method, u, body string, hdr ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, u, rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRunOwnershipAndStreamTokensOverTheBinary serves a project behind a
// JWT strategy (HS256 secret from the environment) with `bread start`: a
// run subject A started cannot be read, tailed or cancelled by subject B
// (403), nor its session read or deleted or its checkpoint resumed (as if
// missing), and can by A; A's stream token tails that run without a
// header, opens no other run and no other route, and stops working after
// its TTL.
func TestRunOwnershipAndStreamTokensOverTheBinary(t *testing.T) {
	dir := project(t, map[string]string{
		"bread.yaml": `store: {type: sqlite, path: ./bread.db}
providers: {replay: {mode: conversation}}
streams: {heartbeat: 200ms}
server:
  auth:
    - type: jwt
      secret: ${JWT_SECRET}
      issuer: https://issuer.test
      audience: bread
      adminClaims: {role: ops}
  streamTokens:
    key: ${STREAM_TOKEN_KEY}
    ttl: 3s
`,
		"agents/publisher/agent.yaml":         "model: {provider: replay, model: t/publisher.jsonl}\n",
		"agents/publisher/tools/confirm.yaml": "type: human\nprompt: Publish?\n",
		"t/publisher.jsonl": `{"call":0,"type":"tool-call","toolCallId":"h1","toolName":"human_confirm","input":{"post":"hello"}}
{"call":0,"type":"finish","finishReason":"tool-calls"}
{"call":1,"type":"text-delta","delta":"Published."}
{"call":1,"type":"finish","finishReason":"stop"}
`,
		"agents/slow/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\n",
		"t/slow.jsonl": `{"call":0,"type":"text-delta","delta":"working","delayMs":10}
{"call":0,"type":"text-delta","delta":" forever","delayMs":600000}
{"call":0,"type":"finish","finishReason":"stop"}
`,
	})
	srv := startReplica(t, dir, []string{"JWT_SECRET=" + jwtSecret, "STREAM_TOKEN_KEY=a-stream-token-key-of-32-bytes-or-more"})
	alice := []string{"Authorization", "Bearer " + hs256(validClaims(map[string]any{"sub": "alice"}))}
	bob := []string{"Authorization", "Bearer " + hs256(validClaims(map[string]any{"sub": "bob"}))}

	// Alice starts a run that waits for a human, and one that runs on.
	run := openAs(t, "POST", srv.base+"/agents/publisher/run", `{"input":"publish hello"}`, alice...)
	startToken := run.resp.Header.Get("X-Bread-Stream-Token")
	first := run.until(core.TypeHumanRequired)
	runX := first[0].RunID
	hr := first[len(first)-1].Crumb.(*core.HumanRequired)
	slow := openAs(t, "POST", srv.base+"/agents/slow/run", `{"input":"go"}`, alice...)
	start, ok := slow.next()
	if !ok {
		t.Fatal("the slow run did not start")
	}
	runY := start.RunID

	for _, c := range []struct{ method, path, body string }{
		{"GET", "/runs/" + runX + "/stream", ""},
		{"GET", "/runs/" + runX, ""},
		{"POST", "/runs/" + runY + "/cancel", ""},
		{"POST", "/runs/" + runX + "/stream-token", ""},
	} {
		if status, body := statusOf(t, c.method, srv.base+c.path, c.body, bob...); status != http.StatusForbidden {
			t.Errorf("bob: %s %s = %d %s, want 403", c.method, c.path, status, body)
		}
	}
	// Alice's session, and so her checkpoint, is missing to bob.
	for _, c := range []struct{ method, path string }{
		{"GET", "/sessions/" + first[0].Crumb.Base().SessionID},
		{"DELETE", "/sessions/" + first[0].Crumb.Base().SessionID},
	} {
		if status, body := statusOf(t, c.method, srv.base+c.path, "", bob...); status != http.StatusNotFound {
			t.Errorf("bob: %s %s = %d %s, want 404", c.method, c.path, status, body)
		}
	}
	if status, body := statusOf(t, "POST", srv.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`, bob...); status != http.StatusOK || !strings.Contains(body, `"CHECKPOINT_NOT_FOUND"`) {
		t.Errorf("bob resumes alice's checkpoint: %d %s, want the stream of an unknown checkpoint", status, body)
	}
	// The run's response carried a token for it, good for X only.
	if startToken == "" {
		t.Fatal("POST /agents/publisher/run sent no X-Bread-Stream-Token")
	}
	if status, body := statusOf(t, "GET", srv.base+"/runs/"+runY+"/stream?access_token="+url.QueryEscape(startToken), ""); status != http.StatusUnauthorized {
		t.Errorf("X's start token on Y: %d %s", status, body)
	}
	if status, body := statusOf(t, "GET", srv.base+"/runs/"+runX+"?access_token="+url.QueryEscape(startToken), ""); status != http.StatusUnauthorized {
		t.Errorf("X's start token on GET /runs/X: %d %s", status, body)
	}
	if status, body := statusOf(t, "GET", srv.base+"/runs/"+runX, "", alice...); status != http.StatusOK || !strings.Contains(body, `"status":"suspended"`) {
		t.Errorf("alice reads her run: %d %s", status, body)
	}
	if status, body := statusOf(t, "GET", srv.base+"/sessions/"+first[0].Crumb.Base().SessionID, "", alice...); status != http.StatusOK {
		t.Errorf("alice reads her session: %d %s", status, body)
	}
	// An admin (adminClaims) may read every run.
	root := []string{"Authorization", "Bearer " + hs256(validClaims(map[string]any{"sub": "carol", "role": "ops"}))}
	if status, body := statusOf(t, "GET", srv.base+"/runs/"+runX, "", root...); status != http.StatusOK {
		t.Errorf("an admin reads alice's run: %d %s", status, body)
	}

	// Alice's stream token for X.
	status, body := statusOf(t, "POST", srv.base+"/runs/"+runX+"/stream-token", "", alice...)
	var minted struct {
		Token     string `json:"token"`
		ExpiresAt int64  `json:"expiresAt"`
	}
	if err := json.Unmarshal([]byte(body), &minted); status != http.StatusOK || err != nil || minted.Token == "" {
		t.Fatalf("minting a stream token: %d %s", status, body)
	}
	q := "?" + url.Values{"access_token": {minted.Token}}.Encode()
	for _, c := range []struct{ method, path string }{
		{"GET", "/runs/" + runY + "/stream" + q},
		{"GET", "/runs/" + runX + q},
		{"POST", "/runs/" + runX + "/cancel" + q},
		{"POST", "/resume/" + hr.CheckpointID + q},
		{"GET", "/agents" + q},
	} {
		if status, body := statusOf(t, c.method, srv.base+c.path, "", nil...); status != http.StatusUnauthorized {
			t.Errorf("the token on %s %s = %d %s, want 401", c.method, c.path, status, body)
		}
	}
	// The token tails X without a header: the history, then, after
	// alice resumes, the continuation to its end.
	tail := openAs(t, "GET", srv.base+"/runs/"+runX+"/stream"+q, "")
	if got := kinds(tail.until(core.TypeHumanRequired)); !strings.HasPrefix(got, core.TypeAgentRunStart) {
		t.Fatalf("the token's tail replays the run: %s", got)
	}
	req, _ := http.NewRequest("POST", srv.base+"/resume/"+hr.CheckpointID, strings.NewReader(`{"response":{"ok":true}}`))
	req.Header.Set(alice[0], alice[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Bread-Stream-Token") == "" {
		t.Errorf("alice resumes her run: %d, stream token header %q", resp.StatusCode, resp.Header.Get("X-Bread-Stream-Token"))
	}
	if got := kinds(tail.until(core.TypeAgentRunEnd)); !strings.HasPrefix(got, core.TypeHumanResumed) {
		t.Errorf("the token's tail follows the resume: %s", got)
	}

	// Alice cancels her own run.
	if status, body := statusOf(t, "POST", srv.base+"/runs/"+runY+"/cancel", "", alice...); status != http.StatusOK {
		t.Errorf("alice cancels her run: %d %s", status, body)
	}

	// After its TTL the token is refused.
	time.Sleep(time.Until(time.UnixMilli(minted.ExpiresAt)) + 100*time.Millisecond)
	if status, body := statusOf(t, "GET", srv.base+"/runs/"+runX+"/stream"+q, ""); status != http.StatusUnauthorized {
		t.Errorf("an expired token: %d %s", status, body)
	}
	if strings.Contains(srv.logs.String(), minted.Token) {
		t.Error("the server logged the stream token")
	}
}
