package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/providers/replay"
	"github.com/breadai/bread/server"
)

// serveFlags are dev's and start's flags.
type serveFlags struct {
	port         int
	host         string
	record       string
	logFormat    string
	logLevel     string
	drainTimeout time.Duration
}

func parseServe(name string, a *app, args []string) (serveFlags, int, bool) {
	var f serveFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.IntVar(&f.port, "p", 0, "port")
	fs.IntVar(&f.port, "port", 0, "port")
	fs.StringVar(&f.host, "H", "", "host")
	fs.StringVar(&f.host, "host", "", "host")
	fs.StringVar(&f.record, "record", "", "record model calls to FILE")
	fs.StringVar(&f.logFormat, "log-format", "", "text or json")
	fs.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", 0, "how long SIGTERM waits for running runs")
	pos, err := a.parse(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err == nil {
		err = a.serveEnv(&f)
	}
	if err != nil {
		return f, a.usageError(name, err), false
	}
	return f, 0, true
}

// serveEnv fills what the flags left out from the environment (BREAD_PORT,
// BREAD_HOST, BREAD_LOG_FORMAT, BREAD_LOG_LEVEL, BREAD_DRAIN_TIMEOUT) and
// builds the logger (text by default, json on request; ids as run_id,
// session_id, agent_id), unless Options.Logger is set.
func (a *app) serveEnv(f *serveFlags) error {
	if v := a.getenv("BREAD_PORT"); v != "" && f.port == 0 {
		p, err := strconv.Atoi(v)
		if err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("BREAD_PORT %q is not a port", v)
		}
		f.port = p
	}
	if v := a.getenv("BREAD_HOST"); v != "" && f.host == "" {
		f.host = v
	}
	if v := a.getenv("BREAD_DRAIN_TIMEOUT"); v != "" && f.drainTimeout == 0 {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("BREAD_DRAIN_TIMEOUT %q is not a positive duration such as 30s", v)
		}
		f.drainTimeout = d
	}
	if f.logFormat == "" {
		f.logFormat = a.getenv("BREAD_LOG_FORMAT")
	}
	if f.logLevel == "" {
		f.logLevel = a.getenv("BREAD_LOG_LEVEL")
	}
	var level slog.Level
	if f.logLevel != "" {
		if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
			return fmt.Errorf("log level %q is not debug, info, warn or error", f.logLevel)
		}
	}
	ho := &slog.HandlerOptions{Level: level, ReplaceAttr: logKeys}
	var h slog.Handler
	switch strings.ToLower(f.logFormat) {
	case "", "text":
		h = slog.NewTextHandler(a.stderr, ho)
	case "json":
		h = slog.NewJSONHandler(a.stderr, ho)
	default:
		return fmt.Errorf("log format %q is not text or json", f.logFormat)
	}
	if a.opts.Logger == nil {
		a.log = slog.New(h)
	}
	return nil
}

// withRecording opens --record's file and wraps the providers to write it.
func (a *app) withRecording(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	a.recorder = replay.NewRecorder(f)
	return func() {
		if err := a.recorder.Err(); err != nil {
			fmt.Fprintln(a.stderr, "bread: recording:", err)
		}
		_ = f.Close()
	}, nil
}

// address picks the bind: flags, then bread.yaml's server section, then
// localhost:3000.
func (a *app) address(f serveFlags, so *server.Options) {
	if f.port != 0 {
		so.Port = f.port
	}
	if f.host != "" {
		so.Host = f.host
	}
	if so.Host == "" {
		so.Host = server.DefaultHost
	}
	if so.Port == 0 {
		so.Port = server.DefaultPort
	}
}

func cmdStart(ctx context.Context, a *app, args []string) int {
	f, code, ok := parseServe("start", a, args)
	if !ok {
		return code
	}
	done, err := a.withRecording(f.record)
	if err != nil {
		return a.fail(err)
	}
	defer done()
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	if a.refuseInvalid(ctx) {
		return ExitFailure
	}
	inst, so, err := a.started(ctx, modeServe)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))
	a.address(f, so)
	srv, err := a.newServer(inst, so)
	if err != nil {
		return a.fail(err)
	}
	// The server outlives ctx (SIGTERM, SIGINT) by the drain: readiness
	// turns false and new runs get 503 at once, running runs have until
	// the drain deadline to finish, then Stop cancels what is left and
	// waits for their terminal crumbs, so every open tail ends with a
	// terminal frame before the listener closes.
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe(serveCtx) }()
	select {
	case err := <-served:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return a.fail(err)
		}
		return ExitOK
	case <-ctx.Done():
	}
	deadline := a.drainTimeout(f)
	a.log.Info("bread: shutting down: draining", "deadline", deadline.String())
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline)
	if err := srv.Drain(dctx); err != nil {
		a.log.Warn("bread: drain deadline reached; cancelling the runs still going")
	}
	cancel()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	if err := inst.Stop(sctx); err != nil {
		a.log.Warn("bread: stop", "error", err)
	}
	cancel()
	stopServing()
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		a.log.Warn("bread: shutdown", "error", err)
	}
	a.log.Info("bread: stopped")
	return ExitOK
}

// logKeys spells the ids a log line carries about a run the way log
// pipelines expect them: run_id, session_id, agent_id, checkpoint_id
// (the engine, the streams and the Redis coordinator write these keys
// already, through core.RunLogAttrs; some lines,
// such as the server's ownership checks, still log runId or sessionId).
func logKeys(_ []string, a slog.Attr) slog.Attr {
	switch a.Key {
	case "runId":
		a.Key = "run_id"
	case "sessionId":
		a.Key = "session_id"
	case "agentId":
		a.Key = "agent_id"
	case "checkpointId":
		a.Key = "checkpoint_id"
	}
	return a
}

// DefaultDrainTimeout is how long `start` waits on SIGTERM for running runs
// before cancelling them.
const DefaultDrainTimeout = 25 * time.Second

// drainTimeout: --drain-timeout or BREAD_DRAIN_TIMEOUT, then bread.yaml's
// server.drainTimeout, then DefaultDrainTimeout.
func (a *app) drainTimeout(f serveFlags) time.Duration {
	switch {
	case f.drainTimeout > 0:
		return f.drainTimeout
	case a.project != nil && a.project.Config.Server.DrainTimeout > 0:
		return a.project.Config.Server.DrainTimeout
	}
	return DefaultDrainTimeout
}

// generation is one loaded project serving requests: its instance, its
// handler, and the requests still in flight on it.
type generation struct {
	inst     *engine.Instance
	srv      *server.Server
	inflight sync.WaitGroup
}

// swapper routes each request to the current generation and counts it, so
// an old generation stops only after its last request (an open stream
// included) has finished.
type swapper struct {
	cur atomic.Pointer[generation]
}

func (s *swapper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g := s.cur.Load()
	g.inflight.Add(1)
	defer g.inflight.Done()
	g.srv.Handler().ServeHTTP(w, r)
}

func cmdDev(ctx context.Context, a *app, args []string) int {
	f, code, ok := parseServe("dev", a, args)
	if !ok {
		return code
	}
	done, err := a.withRecording(f.record)
	if err != nil {
		return a.fail(err)
	}
	defer done()
	first, so, err := a.generation(ctx)
	if err != nil {
		return a.fail(err)
	}
	a.address(f, so)
	// The address is checked before it is bound, as start checks it: a
	// public address without auth is never open, not even for a moment.
	if err := first.srv.CheckHost(so.Host); err != nil {
		_ = first.inst.Stop(context.WithoutCancel(ctx))
		return a.fail(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(strings.Trim(so.Host, "[]"), strconv.Itoa(so.Port)))
	if err != nil {
		_ = first.inst.Stop(context.WithoutCancel(ctx))
		return a.fail(err)
	}
	if err := first.srv.CheckListener(ln); err != nil {
		ln.Close()
		_ = first.inst.Stop(context.WithoutCancel(ctx))
		return a.fail(err)
	}
	sw := &swapper{}
	sw.cur.Store(first)
	// The first generation's timeouts and connection cap hold for the
	// listener's life: a reload that changes them needs a restart.
	hs := first.srv.HTTPServer(sw)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(first.srv.Listener(ln)) }()
	fmt.Fprintf(a.stderr, "bread dev: serving %s on http://%s (watching for changes)\n", a.project.Dir, ln.Addr())

	changes, stopWatch, err := watch(ctx, a.project.Dir, a.log)
	if err != nil {
		a.log.Warn("bread dev: file watching is off", "error", err)
	}
	defer stopWatch()
	var retiring sync.WaitGroup
	defer retiring.Wait()
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if hs.Shutdown(sctx) != nil {
				// A stream still open (an MCP client's
				// subscriptions/listen holds its request for as long
				// as the client listens) would hold the exit forever.
				_ = hs.Close()
			}
			cancel()
			g := sw.cur.Load()
			g.inflight.Wait()
			_ = g.inst.Stop(context.WithoutCancel(ctx))
			return ExitOK
		case err := <-served:
			return a.fail(err)
		case <-changes:
			next, _, err := a.generation(ctx)
			if err == nil {
				if err = activateMCP(next.inst); err != nil {
					_ = next.inst.Stop(context.WithoutCancel(ctx))
				}
			}
			if err != nil {
				fmt.Fprintln(a.stderr, "bread dev: reload failed, still serving the previous version:", err)
				continue
			}
			old := sw.cur.Swap(next)
			fmt.Fprintln(a.stderr, "bread dev: reloaded")
			retiring.Go(func() {
				old.inflight.Wait()
				_ = old.inst.Stop(context.WithoutCancel(ctx))
			})
		}
	}
}

// generation loads the project and builds a started instance and server.
func (a *app) generation(ctx context.Context) (*generation, *server.Options, error) {
	if err := a.load(); err != nil {
		return nil, nil, err
	}
	problems, warnings := a.checkProject()
	if len(problems) > 0 {
		return nil, nil, errors.Join(problems...)
	}
	for _, w := range warnings {
		a.log.WarnContext(ctx, "bread: "+w)
	}
	inst, so, err := a.started(ctx, modeServe)
	if err != nil {
		return nil, nil, err
	}
	so.Console = true // bread dev always serves the web console at /
	srv, err := a.newServer(inst, so)
	if err != nil {
		_ = inst.Stop(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return &generation{inst: inst, srv: srv}, so, nil
}
