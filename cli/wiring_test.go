package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
	breadproject "github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/stream"
)

// served is a `bread start` running in-process.
type served struct {
	base   string
	stdout *syncWriter
	stderr *syncWriter
}

// serve runs `start` through cli.Main until the test ends.
func serve(t *testing.T, dir string, opts ...cli.Options) *served {
	t.Helper()
	port := freePort(t)
	s := &served{base: "http://127.0.0.1:" + strconv.Itoa(port), stdout: &syncWriter{w: &bytes.Buffer{}}, stderr: &syncWriter{w: &bytes.Buffer{}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var o cli.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Context, o.Args = ctx, []string{"start", "-p", strconv.Itoa(port), "-H", "127.0.0.1", "--cwd", dir}
	o.Stdout, o.Stderr, o.LookupEnv = s.stdout, s.stderr, func(string) (string, bool) { return "", false }
	go func() { done <- cli.Main(o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("start ignored its cancelled context")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(s.base + "/agents"); err == nil {
			resp.Body.Close()
			return s
		}
		select {
		case code := <-done:
			t.Fatalf("start exited %d: %s", code, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("start never answered: %s", s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// post runs an agent over HTTP and returns the response and its body.
func (s *served) post(t *testing.T, path, body, accept string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.base+path, strings.NewReader(body))
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// slowProject is one agent that says "one " and then takes 600 s.
func slowProject(yaml string) map[string]string {
	return map[string]string{
		"bread.yaml":             yaml,
		"agents/slow/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\n",
		"t/slow.jsonl":           "{\"call\":0,\"type\":\"text-delta\",\"delta\":\"one \",\"delayMs\":10}\n{\"call\":0,\"type\":\"text-delta\",\"delta\":\"two\",\"delayMs\":600000}\n{\"call\":0,\"type\":\"finish\",\"finishReason\":\"stop\"}\n",
	}
}

// beats opens the passive stream of the run a slow POST starts, in SSE,
// and returns how long three ": ping" heartbeats took.
func beats(t *testing.T, s *served) time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/agents/slow/run", strings.NewReader(`{"input":"go"}`))
	req.Header.Set("Accept", "application/x-ndjson")
	run, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Body.Close()
	first, err := bufio.NewReader(run.Body).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(first, `"runId":"`)
	runID := first[i+len(`"runId":"`):]
	runID = runID[:strings.IndexByte(runID, '"')]
	tailReq, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/runs/"+runID+"/stream", nil)
	tailReq.Header.Set("Accept", "text/event-stream")
	tail, err := http.DefaultClient.Do(tailReq)
	if err != nil {
		t.Fatal(err)
	}
	defer tail.Body.Close()
	if ct := tail.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("tail Content-Type %q", ct)
	}
	lines := bufio.NewReader(tail.Body)
	began, n := time.Now(), 0
	for n < 3 {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("the tail ended: %v", err)
		}
		if line == ": ping\n" {
			n++
		}
	}
	return time.Since(began)
}

// Every served project streams both formats; a listener prints the runs
// on stdout at the same time; streams.heartbeat reaches the streams.
func TestStartServesBothFormatsWhileAListenerPrints(t *testing.T) {
	files := slowProject("store: memory\nstreams: {heartbeat: 50ms}\nlisteners: [stdout]\n")
	for k, v := range basic(nil) {
		if strings.HasPrefix(k, "agents/") || strings.HasPrefix(k, "t/") {
			files[k] = v
		}
	}
	s := serve(t, project(t, files))
	for _, c := range []struct{ accept, want, prefix string }{
		{"", "application/x-ndjson", `{"v":1,"type":"crumb"`},
		{"text/event-stream", "text/event-stream", "retry: 3000\n\n"},
	} {
		resp, body := s.post(t, "/agents/echo/run", `{"input":"hi"}`, c.accept)
		if ct := resp.Header.Get("Content-Type"); ct != c.want || !strings.HasPrefix(body, c.prefix) || !strings.Contains(body, "Hello there.") {
			t.Fatalf("Accept %q: %s\n%s", c.accept, ct, body)
		}
	}
	if out := s.stdout.String(); strings.Count(out, "Hello there.\n") != 2 {
		t.Fatalf("the stdout listener printed %q, want both runs", out)
	}
	if d := beats(t, s); d > 2*time.Second {
		t.Fatalf("three heartbeats took %s with streams.heartbeat 50ms", d)
	}
}

// The older transport: spellings keep working: httpsse and httpchunked
// serve both formats, pick the format of a request that names neither (the
// seed: the wire follows the configured transport) and set the heartbeat;
// stdout prints without displacing the streams.
func TestTransportIsTheOlderSpelling(t *testing.T) {
	for _, c := range []struct{ yaml, format string }{
		{"store: memory\ntransport: {type: httpsse, heartbeat: 50ms}\n", "text/event-stream"},
		{"store: memory\ntransport: {type: httpchunked, heartbeat: 50ms}\n", "application/x-ndjson"},
		{"store: memory\nstreams: {format: sse, heartbeat: 50ms}\n", "text/event-stream"},
		{"store: memory\nstreams: {heartbeat: 50ms}\n", "application/x-ndjson"},
	} {
		yaml := c.yaml
		s := serve(t, project(t, slowProject(yaml)))
		for _, accept := range []string{"text/event-stream", "application/x-ndjson", "", "*/*"} {
			want := accept
			if want == "" || want == "*/*" {
				want = c.format
			}
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/agents/slow/run", strings.NewReader(`{"input":"go"}`))
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if ct := resp.Header.Get("Content-Type"); ct != want {
				t.Fatalf("%q, Accept %s: %s", yaml, accept, ct)
			}
			resp.Body.Close()
			cancel()
		}
		if d := beats(t, s); d > 2*time.Second {
			t.Fatalf("%q: three heartbeats took %s", yaml, d)
		}
	}
	s := serve(t, project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: memory\ntransport: {type: stdout, verbose: true}\n"})))
	resp, body := s.post(t, "/agents/echo/run", `{"input":"hi"}`, "")
	if resp.Header.Get("Content-Type") != "application/x-ndjson" || !strings.Contains(body, `"type":"agent:run:end"`) {
		t.Fatalf("transport: stdout must not displace the streams: %s", body)
	}
	if out := s.stdout.String(); !strings.Contains(out, "▶ echo\nHello there.\n") {
		t.Fatalf("transport: stdout prints verbosely: %q", out)
	}
}

func TestBuildChecksTheWiring(t *testing.T) {
	// Every file starts with `entrypoints: [echo]` and `store: memory`:
	// what is checked starts at line 3.
	for _, c := range []struct{ yaml, want string }{
		{"bus: carrier-pigeon\n", `bread.yaml:3: INVALID_CONFIG: unknown bus "carrier-pigeon"; known: inprocess, nats, redis`},
		{"bus: {type: redis, ulr: x}\n", "bread.yaml:3: INVALID_CONFIG: redis options"},
		{"bus: {type: nats, url: x, subjetPrefix: y}\n", "bread.yaml:3: INVALID_CONFIG: nats options"},
		{"bus: {type: nats, leaseTTL: soon}\n", "bread.yaml:3"},
		{"bus: {type: inprocess, maxRuns: 10, depth: 1}\n", "bread.yaml:3: INVALID_CONFIG: inprocess options"},
		{"listeners: [stdout, speaker]\n", `unknown listener "speaker"; known: stdout`},
		{"listeners: [{type: stdout, colour: true}]\n", "bread.yaml:3: INVALID_CONFIG: stdout options"},
		{"streams: {heartbeat: soon}\n", "bread.yaml:3"},
		{"transport: carrier-pigeon\n", "bread.yaml:3: INVALID_CONFIG: unknown transport \"carrier-pigeon\"; known: httpchunked, httpsse, redis, stdout"},
		{"transport: {type: httpsse, heartbeat: 1s, buss: {}}\n", "bread.yaml:3: INVALID_CONFIG: httpsse options"},
		{"transport: {type: httpsse, bus: {type: kafka}}\n", `unknown bus "kafka" under transport:`},
		{"bus: inprocess\ntransport: {type: redis, url: x}\n", "bread.yaml:4: INVALID_CONFIG: the bus is set twice"},
		{"streams: {heartbeat: 1s}\ntransport: {type: httpchunked, heartbeat: 2s}\n", "the heartbeat is set twice"},
		{"streams: {format: xml}\n", `bread.yaml:3: INVALID_CONFIG: format "xml" is not a stream format; known: ndjson, sse`},
		{"streams: {format: ndjson}\ntransport: httpsse\n", "the stream format is set twice"},
		{"workers:\n  database: {type: sqlite, pth: jobs.db}\n", `bread.yaml:4: INVALID_CONFIG: sqlite options: json: unknown field "pth"`},
		{"workers: {database: {type: redis}}\n", `bread.yaml:3: INVALID_CONFIG: unknown workers.database type "redis"`},
	} {
		dir := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: memory\n" + c.yaml}))
		for _, cmd := range [][]string{{"build"}, {"invoke", "echo", "hi"}} {
			r := run(t, cli.Options{}, append(cmd, "--cwd", dir)...)
			if r.code != cli.ExitFailure || !strings.Contains(r.stderr, c.want) {
				t.Errorf("%s with %q: code %d, stderr %q, want %q", cmd[0], c.yaml, r.code, r.stderr, c.want)
			}
		}
	}
	ok := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: memory\nbus: {type: inprocess, maxRuns: 10}\nstreams: {heartbeat: 5s}\nlisteners: [{type: stdout, verbose: true}]\n" +
		"transport: {type: httpsse}\n"}))
	if r := run(t, cli.Options{}, "build", "--cwd", ok); r.code != 0 {
		t.Errorf("a valid wiring fails build: %+v", r)
	}
}

// countingBus is the in-process bus, counting what it publishes.
type countingBus struct {
	*stream.Transport
	n atomic.Int64
}

func (b *countingBus) Publish(ctx context.Context, f core.Frame) error {
	b.n.Add(1)
	return b.Transport.Publish(ctx, f)
}

func TestABusFromOptions(t *testing.T) {
	bus := &countingBus{Transport: stream.New(stream.Options{})}
	var saw *breadproject.Component
	opts := cli.Options{Buses: map[string]cli.BusFactory{"counting": func(_ context.Context, c *breadproject.Component, _ *breadproject.Project) (core.BreadBus, error) {
		saw = c
		return bus, nil
	}}}
	dir := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: memory\nbus: {type: counting, size: 3}\n"}))
	if r := run(t, opts, "build", "--cwd", dir); r.code != 0 {
		t.Fatalf("build with a bus from Options.Buses: %+v", r)
	}
	s := serve(t, dir, opts)
	resp, body := s.post(t, "/agents/echo/run", `{"input":"hi"}`, "")
	if resp.StatusCode != 200 || !strings.Contains(body, "agent:run:end") {
		t.Fatalf("run: %s", body)
	}
	if bus.n.Load() == 0 || saw == nil || saw.Int("size") != 3 {
		t.Fatalf("the custom bus published %d frames; its component %+v", bus.n.Load(), saw)
	}
	runID := body[strings.Index(body, `"runId":"`)+len(`"runId":"`):]
	runID = runID[:strings.IndexByte(runID, '"')]
	req, _ := http.NewRequest("GET", s.base+"/runs/"+runID+"/stream", nil)
	tail, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer tail.Body.Close()
	if b, _ := io.ReadAll(tail.Body); !strings.Contains(string(b), "agent:run:end") {
		t.Fatalf("the passive stream on a custom bus: %s", b)
	}
}
