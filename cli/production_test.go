package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// Acceptance tests of the production surface over the built binary:
// readiness following the store, and the SIGTERM drain.

// serveProc is one `bread start` process whose exit the test awaits.
type serveProc struct {
	cmd    *exec.Cmd
	base   string
	logs   *syncWriter
	exited chan error
}

func startServe(t *testing.T, dir string, env []string, args ...string) *serveProc {
	t.Helper()
	port := freePort(t)
	p := &serveProc{base: "http://127.0.0.1:" + strconv.Itoa(port), logs: &syncWriter{w: &bytes.Buffer{}}, exited: make(chan error, 1)}
	p.cmd = exec.Command(binary, append([]string{"start", "--cwd", dir}, args...)...)
	p.cmd.Env = append(os.Environ(), append([]string{"BREAD_PORT=" + strconv.Itoa(port), "BREAD_HOST=127.0.0.1"}, env...)...)
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("bread start logs:\n%s", p.logs.String())
		}
	})
	waitHTTP(t, p.base+"/healthz")
	return p
}

func getReady(t *testing.T, base string) (int, server.HealthBody) {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b server.HealthBody
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		t.Fatalf("/readyz body: %v", err)
	}
	return res.StatusCode, b
}

func waitReady(t *testing.T, base string, want int) server.HealthBody {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, b := getReady(t, base)
		if code == want {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz stayed %d (%+v), want %d", code, b, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tcpProxy forwards a local port to a target; down closes the port and
// every connection through it, up listens on the same port again: a
// database that goes away and comes back, without touching the shared one.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{t: t, target: target, addr: "127.0.0.1:" + strconv.Itoa(freePort(t))}
	p.up()
	t.Cleanup(p.down)
	return p
}

func (p *tcpProxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
}

func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// /readyz turns 503 naming the store when PostgreSQL stops answering and
// 200 again when it comes back; /healthz stays 200 throughout.
func TestReadinessFollowsThePostgresStore(t *testing.T) {
	base := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if base == "" {
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal("BREAD_TEST_POSTGRES_URL is not set")
		}
		t.Skip("BREAD_TEST_POSTGRES_URL is not set")
	}
	pg := freshSchema(t, base)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr
	dir := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: {type: postgres}\n"}))
	p := startServe(t, dir, []string{"DATABASE_URL=" + u.String()}, "--log-format", "json")

	b := waitReady(t, p.base, 200)
	for _, c := range b.Checks {
		if !c.OK {
			t.Fatalf("ready with a failing check: %+v", b)
		}
	}
	proxy.down()
	b = waitReady(t, p.base, 503)
	if b.Status != "unavailable" || !slicesHas(b.Checks, "store", false) {
		t.Fatalf("/readyz with the store down: %+v", b)
	}
	if res, err := http.Get(p.base + "/healthz"); err != nil || res.StatusCode != 200 {
		t.Fatalf("/healthz with the store down: %v %v", res, err)
	}
	proxy.up()
	waitReady(t, p.base, 200)
	if !strings.Contains(p.logs.String(), `"msg":"bread: readiness check failed"`) {
		t.Fatalf("--log-format json logs no JSON lines: %s", p.logs.String())
	}
}

func slicesHas(cs []server.CheckResult, name string, ok bool) bool {
	for _, c := range cs {
		if c.Name == name && c.OK == ok {
			return true
		}
	}
	return false
}

// drainProject streams "one two three ..." a word every 150 ms.
func drainProject(t *testing.T, words int) string {
	var b strings.Builder
	for i := range words {
		line, _ := json.Marshal(map[string]any{"call": 0, "type": "text-delta", "delta": "w" + strconv.Itoa(i) + " ", "delayMs": 150})
		b.Write(line)
		b.WriteString("\n")
	}
	b.WriteString(`{"call":0,"type":"finish","finishReason":"stop"}` + "\n")
	return project(t, basic(map[string]string{"t/echo.jsonl": b.String()}))
}

// startRun opens a streaming run and returns once its first frame arrived,
// with the run's id.
func startRun(t *testing.T, base string) (*frames, string) {
	t.Helper()
	f := open(t, "POST", base+"/agents/echo/run", `{"input":"hi"}`)
	if f.resp.StatusCode != 200 {
		t.Fatalf("run = %d", f.resp.StatusCode)
	}
	fr, ok := f.next()
	if !ok || fr.Crumb.CrumbType() != core.TypeAgentRunStart {
		t.Fatalf("first frame %+v", fr)
	}
	return f, fr.RunID
}

func rest(f *frames) []core.Frame {
	var out []core.Frame
	for {
		fr, ok := f.next()
		if !ok {
			return out
		}
		out = append(out, fr)
	}
}

func waitExit(t *testing.T, p *serveProc, within time.Duration) {
	t.Helper()
	select {
	case err := <-p.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("bread start exited %d after SIGTERM, want 0", ee.ExitCode())
		} else if err != nil {
			t.Fatal(err)
		}
	case <-time.After(within):
		t.Fatalf("bread start did not exit within %v of SIGTERM", within)
	}
}

// SIGTERM during a streaming run: readiness turns false at once, a new run
// is 503 with Retry-After, the running run streams to its end, and the
// process exits 0.
func TestSigtermDrainsARunningStream(t *testing.T) {
	dir := drainProject(t, 10)
	p := startServe(t, dir, nil, "--drain-timeout", "20s")
	f, runID := startRun(t, p.base)
	tail := open(t, "GET", p.base+"/runs/"+runID+"/stream", "")
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	b := waitReady(t, p.base, 503)
	if !slicesHas(b.Checks, "draining", false) {
		t.Fatalf("/readyz while draining: %+v", b)
	}
	res, err := http.Post(p.base+"/agents/echo/run", "application/json", strings.NewReader(`{"input":"again"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("a new run while draining = %d Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	fs := rest(f)
	if len(fs) == 0 || fs[len(fs)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("the running stream ended with %s, want agent:run:end", kinds(fs))
	}
	if ts := rest(tail); len(ts) == 0 || ts[len(ts)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("the open tail ended with %s, want agent:run:end", kinds(ts))
	}
	waitExit(t, p, 10*time.Second)
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("drain took %v", d)
	}
}

// A run longer than the drain deadline is cancelled at the deadline: its
// stream ends with a terminal agent:error RUN_CANCELLED frame and the
// process still exits 0, soon after the deadline.
func TestSigtermCancelsAtTheDrainDeadline(t *testing.T) {
	dir := drainProject(t, 100) // 15 s of streaming
	p := startServe(t, dir, []string{"BREAD_DRAIN_TIMEOUT=700ms"})
	f, runID := startRun(t, p.base)
	tail := open(t, "GET", p.base+"/runs/"+runID+"/stream", "")
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	fs := rest(f)
	last := fs[len(fs)-1].Crumb
	ae, ok := last.(*core.AgentError)
	if !ok || ae.Error == nil || ae.Error.Code != core.CodeRunCancelled {
		t.Fatalf("the cut stream ended with %s", kinds(fs))
	}
	ts := rest(tail)
	if ae, ok := ts[len(ts)-1].Crumb.(*core.AgentError); !ok || ae.Error == nil || ae.Error.Code != core.CodeRunCancelled {
		t.Fatalf("the open tail of the cut run ended with %s", kinds(ts))
	}
	waitExit(t, p, 10*time.Second)
	if d := time.Since(start); d < 700*time.Millisecond || d > 8*time.Second {
		t.Fatalf("exit %v after SIGTERM with a 700ms drain deadline", d)
	}
}

// GET /metrics, off unless configured, serves the Prometheus text format
// through the otel plugin's exporter: after three runs their counters show,
// beside the Go runtime's metrics; a pod address reaches it only because
// server.public lists metrics.read.
func TestMetricsAfterThreeRuns(t *testing.T) {
	plain := startServe(t, project(t, basic(nil)), nil)
	if res, err := http.Get(plain.base + "/metrics"); err != nil || res.StatusCode != 404 {
		t.Fatalf("/metrics without the exporter = %v %v, want 404", res, err)
	}
	dir := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\n" +
		"server: {public: [health.live, health.ready, metrics.read]}\n" +
		"plugins:\n  - {type: otel, metrics: {exporter: prometheus}}\n"}))
	p := startServe(t, dir, nil)
	for range 3 {
		fs := rest(open(t, "POST", p.base+"/agents/echo/run", `{"input":"hi"}`))
		if len(fs) == 0 || fs[len(fs)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
			t.Fatalf("run ended with %s", kinds(fs))
		}
	}
	req, _ := http.NewRequest("GET", p.base+"/metrics", nil)
	req.Host = "10.1.2.3:3000" // as a Prometheus scraping the pod IP sends it
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	text := string(body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`bread_runs_started_total{bread_agent_id="echo"`,
		`bread_runs_ended_total{bread_agent_id="echo",bread_status="completed"`,
		"gen_ai_client_operation_duration_seconds_count{", "bread_crumblog_append_duration_seconds_count{",
		"http_server_request_duration_seconds_count{", "go_goroutines ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "bread_runs_started_total{") && !strings.HasSuffix(line, " 3") {
			t.Errorf("runs started after three runs: %s", line)
		}
	}
	if t.Failed() {
		t.Logf("%s", text)
	}
}

// /readyz turns 503 naming the bus when Redis stops answering, and 200
// when it returns.
func TestReadinessFollowsTheRedisBus(t *testing.T) {
	pg, rd := services(t)
	u, err := url.Parse(rd)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr
	dir := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: {type: postgres}\nbus: {type: redis}\n"}))
	p := startServe(t, dir, []string{"DATABASE_URL=" + freshSchema(t, pg), "REDIS_URL=" + u.String()})
	b := waitReady(t, p.base, 200)
	if !slicesHas(b.Checks, "bus", true) {
		t.Fatalf("/readyz checks no bus: %+v", b)
	}
	proxy.down()
	b = waitReady(t, p.base, 503)
	if !slicesHas(b.Checks, "bus", false) || !slicesHas(b.Checks, "store", true) {
		t.Fatalf("/readyz with Redis down: %+v", b)
	}
	proxy.up()
	waitReady(t, p.base, 200)
}
