package cli_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runBinary runs the built bread binary in dir and returns its exit code,
// stdout and stderr.
func runBinary(t *testing.T, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running bread %v: %v", args, err)
	}
	return result{code, out.String(), errOut.String()}
}

// TestInitNeverOverwrites: init refuses, listing them, when any file it
// would write exists; --force overwrites; init --help creates nothing.
func TestInitNeverOverwrites(t *testing.T) {
	for _, existing := range []string{".gitignore", "agents/assistant/prompt.md", "bread.yaml", "agents/assistant/agent.yaml"} {
		dir := project(t, map[string]string{existing: "mine\n", "transcripts/assistant.jsonl": "mine too\n"})
		r := runBinary(t, dir, "init")
		if r.code != 1 {
			t.Fatalf("init over %s succeeded: %+v", existing, r)
		}
		for _, want := range []string{existing, "transcripts/assistant.jsonl", "--force"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("init over %s: stderr lacks %q: %s", existing, want, r.stderr)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(dir, existing)); string(b) != "mine\n" {
			t.Errorf("init overwrote %s: %q", existing, b)
		}
		if _, err := os.Stat(filepath.Join(dir, "agents/assistant/evals/basics.eval.yaml")); err == nil {
			t.Errorf("init over %s wrote other files before refusing", existing)
		}
		if r := runBinary(t, dir, "init", "--force"); r.code != 0 {
			t.Fatalf("init --force: %+v", r)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, existing)); string(b) == "mine\n" {
			t.Errorf("init --force left %s alone", existing)
		}
	}

	dir := t.TempDir()
	if r := runBinary(t, dir, "init", "sub"); r.code != 0 {
		t.Fatalf("init into a new folder: %+v", r)
	}
	if r := runBinary(t, dir, "init", "sub"); r.code == 0 || !strings.Contains(r.stderr, "bread.yaml") {
		t.Errorf("a second init: %+v", r)
	}

	empty := t.TempDir()
	for _, args := range [][]string{{"init", "--help"}, {"init", "-h"}, {"help", "init"}} {
		r := runBinary(t, empty, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "-force") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("init --help created %v", entries)
	}
}

// TestHelp: every way of asking for help exits 0 and prints the usage with
// each flag's description.
func TestHelp(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		r := runBinary(t, dir, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "usage: bread") || !strings.Contains(r.stdout, "project directory") || !strings.Contains(r.stdout, "invoke") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	// Each command: its usage line and each flag's description.
	wants := map[string][]string{
		"start":    {"usage: bread start", "-drain-timeout", "how long SIGTERM waits", "-log-format", "text or json", "project directory"},
		"dev":      {"usage: bread dev", "-record", "record model calls to FILE"},
		"invoke":   {"usage: bread invoke", "-json", "print the final output as JSON", "-skill", "skill for this run"},
		"chat":     {"usage: bread chat", "-session", "session id to resume"},
		"sessions": {"usage: bread sessions", "-older-than", "-tag", "key=value (repeatable)"},
		"init":     {"usage: bread init", "-force", "overwrite the files init writes"},
		"mcp":      {"usage: bread mcp"},
		"eval":     {"usage: bread eval [path]", "project directory"},
		"build":    {"usage: bread build"},
		"provider": {"usage: bread provider"},
		"version":  {"usage: bread version"},
	}
	for name, want := range wants {
		for _, args := range [][]string{{"help", name}, {name, "-h"}, {name, "--help"}, {name, "-help"}} {
			r := runBinary(t, dir, args...)
			if r.code != 0 {
				t.Errorf("%v exited %d: %+v", args, r.code, r)
				continue
			}
			for _, w := range want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("%v: stdout lacks %q:\n%s", args, w, r.stdout)
				}
			}
		}
	}
	// Help after positional arguments, and eval does not take --help as a path.
	for _, args := range [][]string{{"invoke", "echo", "--help"}, {"sessions", "cleanup", "--help"}, {"eval", "--help"}} {
		r := runBinary(t, dir, args...)
		if r.code != 0 || strings.Contains(r.stderr, "no eval suites") || !strings.Contains(r.stdout, "usage: bread "+args[0]) {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("asking for help wrote %v", entries)
	}
	// Errors still exit 2 with the usage on stderr.
	if r := runBinary(t, dir); r.code != 2 || !strings.Contains(r.stderr, "usage: bread") {
		t.Errorf("no command: %+v", r)
	}
	if r := runBinary(t, dir, "invoke", "--bogus"); r.code != 2 || !strings.Contains(r.stderr, "usage: bread invoke") {
		t.Errorf("bad flag: %+v", r)
	}
}

// TestVersion: bread version and bread --version print the build-info
// version (this test binary is built in a module checkout, so "devel").
func TestVersion(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		r := runBinary(t, dir, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "bread ") || strings.TrimSpace(r.stdout) == "bread" {
			t.Errorf("%v: %+v", args, r)
		}
		if !strings.HasPrefix(r.stdout, "bread devel") && !strings.HasPrefix(r.stdout, "bread v") {
			t.Errorf("%v: not a version: %q", args, r.stdout)
		}
	}
	if r := runBinary(t, dir, "version", "extra"); r.code != 2 {
		t.Errorf("version with an argument: %+v", r)
	}
}

// TestStartPublicWithoutAuth: start and dev on a non-loopback host with no
// server.auth refuse to listen with AUTH_NOT_CONFIGURED and exit non-zero,
// before they bind: 192.0.2.1 (TEST-NET-1) is no address of this machine,
// so binding it first would fail with another error.
func TestStartPublicWithoutAuth(t *testing.T) {
	dir := project(t, basic(nil))
	for _, args := range [][]string{{"start", "-H", "0.0.0.0"}, {"start", "-H", "::"}, {"dev", "-H", "0.0.0.0"},
		{"start", "-H", "192.0.2.1"}, {"dev", "-H", "192.0.2.1"}} {
		r := runBinary(t, dir, append(args, "-p", strconv.Itoa(freePort(t)))...)
		if r.code != 1 || !strings.Contains(r.stderr, "AUTH_NOT_CONFIGURED") || !strings.Contains(r.stderr, "refusing to listen on public address") {
			t.Errorf("%v: %+v", args, r)
		}
	}
}

// TestVersionRevision: a build that stamps VCS information (-buildvcs=true)
// prints "devel" and the commit.
func TestVersionRevision(t *testing.T) {
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	bin := filepath.Join(t.TempDir(), "bread")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/bread")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building with -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if want := "bread devel " + strings.TrimSpace(string(rev)); err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("version = %q, %v; want prefix %q", out, err, want)
	}
}
