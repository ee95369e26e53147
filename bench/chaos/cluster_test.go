package chaos

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" for the private database and the checker
)

// Timings of the cluster under test: short, so faults resolve within a
// run of the harness.
const (
	lease     = 2 * time.Second
	heartbeat = 500 * time.Millisecond
)

// project is the bread project the replicas serve: scripted (replay)
// models only, so no model is needed.
func project(t *testing.T) string {
	t.Helper()
	asker := `{"call":0,"type":"text-delta","delta":"Let me ask. ","delayMs":50}
{"call":0,"type":"tool-call","toolCallId":"h1","toolName":"human_confirm","input":{"post":"hello"}}
{"call":0,"type":"finish","finishReason":"tool-calls"}
{"call":1,"type":"text-delta","delta":"Published ","delayMs":400}
{"call":1,"type":"text-delta","delta":"everywhere.","delayMs":400}
{"call":1,"type":"finish","finishReason":"stop"}
`
	files := map[string]string{
		"bread.yaml": `store: {type: postgres, url: "${DB_URL}"}
bus: {type: redis, url: "${REDIS_URL}", keyPrefix: "chaos:", leaseTTL: 1s}
streams: {heartbeat: ` + heartbeat.String() + `}
runs: {lease: ` + lease.String() + `}
workers: {concurrency: 8, pollInterval: 100ms, rescueAfter: 5s}
providers: {replay: {mode: conversation}}
schedules:
  - {name: tick, every: 1s, agent: ticker, input: tick}
pipelines:
  fan:
    - {type: agent, agentId: streamer}
    - type: parallel
      steps:
        - {agentId: streamer}
        - {agentId: streamer}
`,
		"agents/streamer/agent.yaml": "model: {provider: replay, model: t/stream.jsonl}\n",
		"t/stream.jsonl": `{"call":0,"type":"text-delta","delta":"one ","delayMs":100}
{"call":0,"type":"text-delta","delta":"two ","delayMs":200}
{"call":0,"type":"text-delta","delta":"three","delayMs":200}
{"call":0,"type":"finish","finishReason":"stop"}
`,
		"agents/ticker/agent.yaml":  "model: {provider: replay, model: t/tick.jsonl}\n",
		"t/tick.jsonl":              `{"call":0,"type":"text-delta","delta":"tock"}` + "\n" + `{"call":0,"type":"finish","finishReason":"stop"}` + "\n",
		"agents/retrier/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\nonLost: {action: retry, maxAttempts: 3}\n",
		"agents/failer/agent.yaml":  "model: {provider: replay, model: t/slow.jsonl}\nonLost: fail\n",
		"t/slow.jsonl": `{"call":0,"type":"text-delta","delta":"working","delayMs":10}
{"call":0,"type":"text-delta","delta":" done","delayMs":3000}
{"call":0,"type":"finish","finishReason":"stop"}
`,
		"agents/boss/agent.yaml": "model: {provider: replay, model: t/boss.jsonl}\nsupervisor: {agents: [{agentId: streamer}]}\n",
		"t/boss.jsonl": `{"call":0,"type":"tool-call","toolCallId":"d1","toolName":"core_delegate","input":{"agentId":"streamer","input":"go"}}
{"call":0,"type":"finish","finishReason":"tool-calls"}
{"call":1,"type":"text-delta","delta":"delegated"}
{"call":1,"type":"finish","finishReason":"stop"}
`,
		"agents/asker/agent.yaml":         "model: {provider: replay, model: t/asker.jsonl}\n",
		"agents/asker/tools/confirm.yaml": "type: human\nprompt: Publish?\n",
		"t/asker.jsonl":                   asker,
	}
	for _, p := range policies {
		files["agents/chat_"+p+"/agent.yaml"] = "model: {provider: replay, model: t/asker.jsonl}\nconcurrency: " + p + "\n"
		files["agents/chat_"+p+"/tools/confirm.yaml"] = "type: human\nprompt: Publish?\n"
	}
	dir := t.TempDir()
	for path, content := range files {
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// policies are the session concurrency policies the chat agents use.
var policies = []string{"reject", "enqueue", "interrupt", "rollback"}

// buildBread builds the bread binary from the workspace's cli module.
func buildBread(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bread")
	build := exec.Command("go", "build", "-o", bin, "./cmd/bread")
	build.Dir = filepath.Join("..", "..", "cli")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building bread: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// child starts a process the harness owns: killed with the harness
// (Pdeathsig) even if the test binary dies without its cleanups.
func child(name string, args []string, env []string, logs *os.File) (*exec.Cmd, chan struct{}, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	return cmd, done, nil
}

// redisProc is the private redis-server: the bus and the coordinator, on
// its own port so it can be restarted without touching the shared one.
type redisProc struct {
	port int
	dir  string
	logs *os.File
	cmd  *exec.Cmd
	done chan struct{}
}

func startRedis(t *testing.T, logs *os.File) *redisProc {
	t.Helper()
	r := &redisProc{port: freePort(t), dir: t.TempDir(), logs: logs}
	if err := r.start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(r.kill)
	return r
}

func (r *redisProc) url() string { return "redis://127.0.0.1:" + strconv.Itoa(r.port) + "/0" }

func (r *redisProc) start() error {
	var err error
	r.cmd, r.done, err = child("redis-server", []string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.dir}, nil, r.logs)
	if err != nil {
		return err
	}
	for range 100 {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(r.port), 100*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("redis-server on %d did not listen", r.port)
}

func (r *redisProc) kill() {
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

// restart is an outage: everything Redis held is gone.
func (r *redisProc) restart() error {
	r.kill()
	return r.start()
}

// privateDB creates a database of its own on the shared PostgreSQL and
// drops it at the end; admin is a connection to the base database.
func privateDB(t *testing.T, base string) (dbURL, name string, admin *sql.DB) {
	t.Helper()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	name = "chaos_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("CREATE DATABASE: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
		if os.Getenv("CHAOS_KEEP_DB") != "" {
			// Kept to be read after the run (the checker's findings, with
			// the replica logs); dropped by hand.
			fmt.Printf("chaos: database %s kept (CHAOS_KEEP_DB); drop it with DROP DATABASE %s\n", name, name)
			admin.Close()
			return
		}
		if _, err := admin.Exec("DROP DATABASE " + name); err != nil {
			t.Logf("DROP DATABASE %s: %v", name, err)
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String(), name, admin
}

// replica is one `bread start` process slot: the same port across
// restarts, so clients keep its address.
type replica struct {
	idx  int
	port int
	base string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	paused   bool
	restarts int
}

type cluster struct {
	t    *testing.T
	bin  string
	dir  string
	env  []string
	logs *os.File
	reps []*replica
}

func (c *cluster) start(r *replica) error {
	cmd, done, err := child(c.bin, []string{"start", "-p", strconv.Itoa(r.port), "-H", "127.0.0.1", "--cwd", c.dir}, c.env, c.logs)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.cmd, r.done, r.paused = cmd, done, false
	r.mu.Unlock()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("replica %d exited while starting", r.idx)
		default:
		}
		resp, err := http.Get(r.base + "/agents")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("replica %d did not come up", r.idx)
}

// signal sends sig to r's process, if it runs.
func (r *replica) signal(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		_ = r.cmd.Process.Signal(sig)
	}
}

func (r *replica) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// kill stops r at once (SIGKILL) and waits for it; a paused r is killed
// too.
func (r *replica) kill() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// up reports whether r runs and is not paused.
func (r *replica) up() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil || r.paused {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

func newCluster(t *testing.T, bin, dir string, env []string, logs *os.File, n int) *cluster {
	c := &cluster{t: t, bin: bin, dir: dir, env: env, logs: logs}
	for i := range n {
		p := freePort(t)
		c.reps = append(c.reps, &replica{idx: i, port: p, base: "http://127.0.0.1:" + strconv.Itoa(p)})
	}
	t.Cleanup(func() {
		for _, r := range c.reps {
			r.signal(syscall.SIGCONT)
			r.kill()
		}
	})
	for _, r := range c.reps {
		if err := c.start(r); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// fds counts the open descriptors of a process; threads its OS threads.
func fds(pid int) int {
	es, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return -1
	}
	return len(es)
}

func threads(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := strings.CutPrefix(string(l), "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}

var _ = context.Background
