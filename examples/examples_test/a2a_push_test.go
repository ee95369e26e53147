package examplestest

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/breadai/bread/engine/webhook"
)

var pushReceiver struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// pushReceiverBinary builds examples/a2a/push-receiver once.
func pushReceiverBinary(t *testing.T) string {
	t.Helper()
	pushReceiver.once.Do(func() {
		pushReceiver.path = filepath.Join(tmpRoot, "push-receiver")
		pushReceiver.out, pushReceiver.err = exec.Command("go", "build", "-o", pushReceiver.path, "github.com/breadai/bread/examples/a2a/push-receiver").CombinedOutput()
	})
	if pushReceiver.err != nil {
		t.Fatalf("go build push-receiver: %v\n%s", pushReceiver.err, pushReceiver.out)
	}
	return pushReceiver.path
}

// receiverProc is a running push-receiver: its URL, and what it printed
// (stdout: one line per notification accepted; stderr: its log).
type receiverProc struct {
	URL            string
	stdout, stderr *syncBuffer
}

// startReceiver runs the push receiver on a free loopback port with the
// webhook secret and args, stopped (SIGTERM, a clean exit) at cleanup.
func startReceiver(t *testing.T, secret string, args ...string) *receiverProc {
	t.Helper()
	cmd := exec.Command(pushReceiverBinary(t), append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = []string{"BREAD_WEBHOOK_SECRET=" + secret}
	if v, ok := os.LookupEnv("GORACE"); ok {
		cmd.Env = append(cmd.Env, "GORACE="+v)
	}
	r := &receiverProc{stdout: newSyncBuffer(), stderr: newSyncBuffer()}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("push-receiver ignored SIGTERM for 20s")
			return
		}
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("push-receiver exited with %d:\n%s", code, r.stderr.String())
		}
	})
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	waitFor(t, r.stdout, done, func(s string) bool {
		if m := listening.FindStringSubmatch(s); m != nil {
			r.URL = m[1]
			return true
		}
		return false
	})
	return r
}

// waitFor waits until buf's text satisfies ok, failing after a minute or
// once the process (done) ended without it.
func waitFor(t *testing.T, buf *syncBuffer, done <-chan struct{}, ok func(string) bool) {
	t.Helper()
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	for !ok(buf.String()) {
		select {
		case <-buf.wrote:
		case <-done:
			if !ok(buf.String()) {
				t.Fatalf("the process ended; it printed:\n%s", buf.String())
			}
			return
		case <-timeout.C:
			t.Fatalf("waited a minute; it printed:\n%s", buf.String())
		}
	}
}

// updates are the states of task the receiver printed, in order.
func (r *receiverProc) updates(task string) []string {
	var out []string
	for line := range strings.Lines(r.stdout.String()) {
		if rest, ok := strings.CutPrefix(line, "task "+task+" "); ok {
			f := strings.Fields(rest)
			out = append(out, f[2]) // "(context", "<id>)", "<state>", ...
		}
	}
	return out
}

// waitUpdates waits until the receiver printed want for task, and fails
// if it printed anything else.
func (r *receiverProc) waitUpdates(t *testing.T, task string, want ...string) {
	t.Helper()
	waitFor(t, r.stdout, nil, func(string) bool { return len(r.updates(task)) >= len(want) })
	if got := strings.Join(r.updates(task), " "); got != strings.Join(want, " ") {
		t.Fatalf("the receiver printed %q for task %s, want %q:\n%s", got, task, strings.Join(want, " "), r.stdout.String())
	}
}

// TestA2APushReceiver runs examples/a2a/push-receiver against
// examples/a2a/server as its README does: a task sent with a push config
// reaches the receiver at each state change (signed; its token checked;
// the first notification answered 500 and delivered again), over v0.3
// JSON-RPC and over v1.0 HTTP+JSON (Bearer credentials); the receiver
// refuses a notification whose signature or token is wrong.
func TestA2APushReceiver(t *testing.T) {
	t.Parallel()
	const secret = "example-test-secret"
	serverDir := copyExample(t, "a2a/server")
	srv := startServer(t, serverDir, map[string]string{"BREAD_WEBHOOK_SECRET": secret})
	editor := filepath.Join(serverDir, "transcripts/editor.jsonl")
	said := transcriptText(t, editor, 0) + transcriptText(t, editor, 1)

	t.Run("v0.3: a task that waits for a human, retried after a 500", func(t *testing.T) {
		rcv := startReceiver(t, secret, "-token", "tok-1", "-fail-first", "1")
		params := map[string]any{
			"message":       userMessage(map[string]any{"kind": "text", "text": "Title my post on sourdough."}),
			"configuration": map[string]any{"pushNotificationConfig": map[string]any{"url": rcv.URL, "token": "tok-1"}},
		}
		task, rpcErr := rpc(t, srv.URL+"/a2a/editor", "message/send", params)
		if rpcErr != nil || state(task) != "input-required" {
			t.Fatalf("task %v, error %v", task, rpcErr)
		}
		id := task["id"].(string)
		rcv.waitUpdates(t, id, "working", "input-required")

		msg := userMessage(map[string]any{"kind": "data", "data": map[string]any{"title": "Why sourdough rises"}})
		msg["taskId"] = id
		if task, rpcErr = rpc(t, srv.URL+"/a2a/editor", "message/send", map[string]any{"message": msg}); rpcErr != nil || state(task) != "completed" {
			t.Fatalf("the answer: task %v, error %v", task, rpcErr)
		}
		rcv.waitUpdates(t, id, "working", "input-required", "working", "completed")
		if n := strings.Count(rcv.stderr.String(), "answered 500 on purpose"); n != 1 {
			t.Fatalf("the receiver answered 500 %d times, want 1:\n%s", n, rcv.stderr.String())
		}
		out := rcv.stdout.String()
		if !strings.Contains(out, "input-required message=") || !strings.Contains(out, "completed text="+strconv.Quote(said)) {
			t.Fatalf("the receiver printed no question or no answer text %q:\n%s", said, out)
		}
	})

	t.Run("v1.0 HTTP+JSON with Bearer credentials", func(t *testing.T) {
		rcv := startReceiver(t, secret, "-bearer", "b3arer")
		body, _ := json.Marshal(map[string]any{
			"message": map[string]any{"messageId": "m-v1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Why does sourdough rise?"}}},
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{
				"url": rcv.URL, "authentication": map[string]any{"scheme": "Bearer", "credentials": "b3arer"}}},
		})
		res, err := http.Post(srv.URL+"/a2a/v1/message:send", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || out.Task.Status.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("message:send: HTTP %d, %+v (%v)", res.StatusCode, out, err)
		}
		rcv.waitUpdates(t, out.Task.ID, "working", "completed")
	})

	t.Run("the receiver refuses what it cannot verify", func(t *testing.T) {
		rcv := startReceiver(t, secret, "-token", "tok-2")
		body := []byte(`{"id":"t1","contextId":"c1","status":{"state":"completed"}}`)
		post := func(signature, token string) int {
			req, _ := http.NewRequest(http.MethodPost, rcv.URL, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Bread-Signature", signature)
			req.Header.Set("X-A2A-Notification-Token", token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		now := time.Now()
		for _, c := range []struct {
			name, signature, token string
			want                   int
		}{
			{"no signature", "", "tok-2", http.StatusUnauthorized},
			{"another secret", webhook.Sign("not-the-secret", now, body), "tok-2", http.StatusUnauthorized},
			{"too old", webhook.Sign(secret, now.Add(-time.Hour), body), "tok-2", http.StatusUnauthorized},
			{"the wrong token", webhook.Sign(secret, now, body), "tok-other", http.StatusUnauthorized},
			{"signed, with its token", webhook.Sign(secret, now, body), "tok-2", http.StatusNoContent},
		} {
			if got := post(c.signature, c.token); got != c.want {
				t.Errorf("%s: HTTP %d, want %d", c.name, got, c.want)
			}
		}
		rcv.waitUpdates(t, "t1", "completed")
	})
}
