package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
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
	port   int
	host   string
	record string
}

func parseServe(name string, a *app, args []string) (serveFlags, int, bool) {
	var f serveFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.IntVar(&f.port, "p", 0, "port")
	fs.IntVar(&f.port, "port", 0, "port")
	fs.StringVar(&f.host, "H", "", "host")
	fs.StringVar(&f.host, "host", "", "host")
	fs.StringVar(&f.record, "record", "", "record model calls to FILE")
	pos, err := parse(fs, args)
	if err != nil || len(pos) > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q", pos[0])
		}
		return f, a.usageError(name, err), false
	}
	return f, 0, true
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
	inst, so, err := a.started(ctx, modeServe)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))
	a.address(f, so)
	srv, err := server.New(inst, *so)
	if err != nil {
		return a.fail(err)
	}
	if err := srv.ListenAndServe(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return a.fail(err)
	}
	return ExitOK
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
	hs := &http.Server{Handler: sw, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
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
			_ = hs.Shutdown(sctx)
			cancel()
			g := sw.cur.Load()
			g.inflight.Wait()
			_ = g.inst.Stop(context.WithoutCancel(ctx))
			return ExitOK
		case err := <-served:
			return a.fail(err)
		case <-changes:
			next, _, err := a.generation(ctx)
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
	inst, so, err := a.started(ctx, modeServe)
	if err != nil {
		return nil, nil, err
	}
	srv, err := server.New(inst, *so)
	if err != nil {
		_ = inst.Stop(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return &generation{inst: inst, srv: srv}, so, nil
}
