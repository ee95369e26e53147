package examplestest

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	exampleJWTSecret = "the-auth-example-test-secret-of-32+-bytes"
	exampleOpsKey    = "ops-key-for-the-test"
)

// mint runs the example's mint-token.py, as the README does.
func mint(t *testing.T, dir, secret string, args ...string) string {
	t.Helper()
	cmd := exec.Command("python3", append([]string{filepath.Join(dir, "mint-token.py")}, args...)...)
	cmd.Env = []string{"JWT_SECRET=" + secret}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mint-token.py %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestAuth runs the README's curl commands against bread start.
func TestAuth(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "auth")
	srv := startServer(t, dir, map[string]string{"JWT_SECRET": exampleJWTSecret, "OPS_KEY": exampleOpsKey})
	answer := transcriptText(t, filepath.Join(dir, "transcripts/greeter.jsonl"), 0)
	token := mint(t, dir, exampleJWTSecret, "alice")

	call := func(method, path, auth string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(`{"input":"hi"}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, strings.Join(res.Header.Values("WWW-Authenticate"), " | "), string(b)
	}
	for _, c := range []struct {
		name, method, path, auth string
		status                   int
		challenge                string
	}{
		{"no credential", "GET", "/agents", "", 401, `Bearer realm="bread"`},
		{"the token lists agents", "GET", "/agents", token, 200, ""},
		{"the token may not read sessions", "GET", "/sessions", token, 403, ""},
		{"an expired token", "GET", "/agents", mint(t, dir, exampleJWTSecret, "alice", "--ttl", "-300"), 401, `error="invalid_token", error_description="the token has expired"`},
		{"another audience", "GET", "/agents", mint(t, dir, exampleJWTSecret, "alice", "--audience", "elsewhere"), 401, `error_description="the token is not for this audience"`},
		{"another secret", "GET", "/agents", mint(t, dir, "not-the-same-secret-not-the-same-secret"), 401, `error_description="the token's signature is invalid"`},
		{"the ops key reads sessions", "GET", "/sessions", exampleOpsKey, 200, ""},
		{"the ops key may not run agents", "POST", "/agents/greeter/run", exampleOpsKey, 403, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, challenge, body := call(c.method, c.path, c.auth)
			if status != c.status || !strings.Contains(challenge, c.challenge) {
				t.Errorf("%d %q %s, want %d %q", status, challenge, body, c.status, c.challenge)
			}
		})
	}
	t.Run("the token runs the greeter", func(t *testing.T) {
		crumbs := stream(t, srv.URL+"/agents/greeter/run", `{"input":"hi"}`, http.Header{"Authorization": {"Bearer " + token}})
		if out := text(runEnd(t, crumbs, "greeter").Output); out != answer {
			t.Errorf("output %v, want %q", out, answer)
		}
	})
}
