package examplestest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// tmpRoot holds what the tests build once (the bread binary); TestMain
// removes it.
var tmpRoot string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "bread-examples-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmpRoot = dir
	defer os.RemoveAll(dir)
	return m.Run()
}

var binary struct {
	once sync.Once
	path string
	err  error
}

// breadBinary builds cli/cmd/bread once, for the tests that need a real
// server process (cli.Main's start serves until a signal, so it cannot be
// stopped in process).
func breadBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		path := filepath.Join(tmpRoot, "bread")
		args := []string{"build", "-o", path}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/breadai/bread/cli/cmd/bread")
		var out bytes.Buffer
		cmd := exec.Command("go", args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			binary.err = fmt.Errorf("go build bread: %v\n%s", err, out.String())
			return
		}
		binary.path = path
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// examplesDir is examples/, the parent of this module.
func examplesDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyExample copies examples/<name> to a temporary directory, leaving out
// local state (bread.db, .bread/), so a test never writes into the
// repository and never sees a developer's leftovers.
func copyExample(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(examplesDir(t), name)
	dst := filepath.Join(t.TempDir(), filepath.Base(name))
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.Name() == ".bread" || strings.HasPrefix(d.Name(), "bread.db") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy %s: %v", name, err)
	}
	return dst
}

// syncBuffer is a bytes.Buffer safe for the CLI's concurrent writers (the
// logger, the tracer, the run) that also signals every write, so a reader
// can wait for text without sleeping.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// invocation is one bread command line run in process.
type invocation struct {
	dir   string
	args  []string
	env   map[string]string
	stdin string
	// providers override bread.yaml's providers (cli.Options.Providers).
	providers core.ProviderRegistry
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// bread runs `bread --cwd dir args...` through cli.Main. The environment it
// sees for ${VAR} expansion and provider keys is env alone, so a
// BREAD_PROVIDER in the developer's shell cannot turn an offline test into
// a real model call.
func bread(t *testing.T, inv invocation) result {
	t.Helper()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	code := cli.Main(cli.Options{
		Args:      append([]string{"--cwd", inv.dir}, inv.args...),
		Stdin:     strings.NewReader(inv.stdin),
		Stdout:    stdout,
		Stderr:    stderr,
		LookupEnv: func(k string) (string, bool) { v, ok := inv.env[k]; return v, ok },
		Providers: inv.providers,
	})
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// mustBread runs an invocation that must exit 0.
func mustBread(t *testing.T, inv invocation) result {
	t.Helper()
	r := bread(t, inv)
	if r.code != cli.ExitOK {
		t.Fatalf("bread %s: %s", strings.Join(inv.args, " "), r)
	}
	return r
}

// transcriptText is the text a transcript's call streams: what the replayed
// model says in that call.
func transcriptText(t *testing.T, path string, call int) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var ev struct {
			Call  int    `json:"call"`
			Type  string `json:"type"`
			Delta string `json:"delta"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if ev.Call == call && ev.Type == "text-delta" {
			b.WriteString(ev.Delta)
		}
	}
	if b.Len() == 0 {
		t.Fatalf("%s: call %d streams no text", path, call)
	}
	return b.String()
}

// server is a `bread start` process serving a project.
type server struct {
	URL    string
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	once   sync.Once
}

// startServer runs `bread --cwd dir start` on a free loopback port with
// only env (plus PATH, HOME and TMPDIR) as its environment, and waits until
// it listens. The server is stopped at cleanup; stopping it must end in a
// clean exit.
func startServer(t *testing.T, dir string, env map[string]string) *server {
	t.Helper()
	bin := breadBinary(t)
	for attempt := 0; ; attempt++ {
		s, busy := tryStart(t, bin, dir, env)
		if s != nil {
			t.Cleanup(func() { s.stop(t) })
			return s
		}
		// Another process took the port between picking and binding it.
		if !busy || attempt == 4 {
			t.Fatal("the server did not start")
		}
	}
}

func tryStart(t *testing.T, bin, dir string, env map[string]string) (*server, bool) {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(bin, "--cwd", dir, "start", "-p", strconv.Itoa(port))
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GORACE"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	s := &server{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, stderr: newSyncBuffer(), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.stderr, s.stderr
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	for {
		if strings.Contains(s.stderr.String(), "bread: listening") {
			return s, false
		}
		select {
		case <-s.stderr.wrote:
		case <-s.done:
			out := s.stderr.String()
			if strings.Contains(out, "address already in use") {
				return nil, true
			}
			t.Fatalf("bread start exited before listening:\n%s", out)
		case <-timeout.C:
			_ = cmd.Process.Kill()
			<-s.done
			t.Fatalf("bread start did not listen within 60s:\n%s", s.stderr.String())
		}
	}
}

// stop sends SIGTERM, as Ctrl-C would, and waits for the process. It
// reports a server that needed killing or exited with an error (a race
// report included).
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			t.Errorf("bread start ignored SIGTERM for 20s:\n%s", s.stderr.String())
			return
		}
		if code := s.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("bread start exited with %d after SIGTERM:\n%s", code, s.stderr.String())
		}
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// stream posts body to a streaming route and returns every crumb of the
// NDJSON response, in order.
func stream(t *testing.T, url, body string, header http.Header) []core.Crumb {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("POST %s: %s %s", url, res.Status, b)
	}
	var crumbs []core.Crumb
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue // heartbeat
		}
		f, err := protocol.DecodeCrumbFrame(line)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		crumbs = append(crumbs, f.Crumb)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("POST %s: reading the stream: %v", url, err)
	}
	return crumbs
}

// crumbsOf picks the crumbs of type T.
func crumbsOf[T core.Crumb](crumbs []core.Crumb) []T {
	var out []T
	for _, c := range crumbs {
		if v, ok := c.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// runEnd is the agent:run:end of agentID, failing the test without one.
func runEnd(t *testing.T, crumbs []core.Crumb, agentID string) *core.AgentRunEnd {
	t.Helper()
	for _, e := range crumbsOf[*core.AgentRunEnd](crumbs) {
		if e.AgentID == agentID {
			return e
		}
	}
	t.Fatalf("no agent:run:end of %s in %d crumbs: %s", agentID, len(crumbs), crumbTypes(crumbs))
	return nil
}

func crumbTypes(crumbs []core.Crumb) string {
	types := make([]string, len(crumbs))
	for i, c := range crumbs {
		types[i] = c.CrumbType() + "(" + c.Base().AgentID + ")"
	}
	return strings.Join(types, " ")
}

// jsonText is v as compact JSON.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// text is a crumb's output as text: decoded crumbs carry outputs as raw
// JSON, so a JSON string becomes its value and anything else stays JSON.
func text(v any) string {
	raw, ok := v.(json.RawMessage)
	if !ok {
		if s, isString := v.(string); isString {
			return s
		}
		return jsonText(v)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
