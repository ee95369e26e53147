package mcpclient

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// conn is one server: a loop that connects, lists the tools, waits for the
// session to end and reconnects with backoff, until the plugin closes.
// Tools read the session current at call time, so a reconnect is invisible
// to them.
type conn struct {
	p      *Plugin
	cfg    Server
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop returns
	first  chan struct{} // closed after the first attempt, failed or not
	wake   chan struct{} // a failed call asks for an early retry

	mu      sync.Mutex
	session *mcp.ClientSession
	tools   []core.Tool // the last listing; nil before the first one
	// features are the tools of the server's resources and prompts (set
	// at connect, read under mu).
	features []core.Tool
	err      error // why the server is not connected, or nil
}

func newConn(p *Plugin, cfg Server) *conn {
	ctx, cancel := context.WithCancel(p.ctx)
	return &conn{p: p, cfg: cfg, ctx: ctx, cancel: cancel, done: make(chan struct{}), first: make(chan struct{}), wake: make(chan struct{}, 1)}
}

func (c *conn) log() *slog.Logger { return c.p.log.With("plugin", PluginName, "server", c.cfg.Name) }

// loop runs until the plugin closes.
func (c *conn) loop() {
	defer close(c.done)
	firstDone := false
	markFirst := func() {
		if !firstDone {
			firstDone = true
			close(c.first)
		}
	}
	defer markFirst()
	delay := c.p.opts.Backoff
	for {
		sess, err := c.connect()
		markFirst()
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			c.setDown(err)
			c.log().Warn("bread: MCP server failed; retrying", "reason", err.Error(), "retryIn", delay.String())
			if !c.sleep(delay) {
				return
			}
			delay = min(delay*2, c.p.opts.MaxBackoff)
			continue
		}
		delay = c.p.opts.Backoff
		err = sess.Wait()
		if c.ctx.Err() != nil {
			return
		}
		reason := "the session ended"
		if err != nil {
			reason = err.Error()
		}
		c.setDown(core.Errorf(core.CodeToolError, "MCP server %s disconnected: %s", c.cfg.Name, reason))
		c.log().Warn("bread: MCP server disconnected; reconnecting", "reason", reason)
		if !c.sleep(delay) {
			return
		}
	}
}

// sleep waits d (with a little jitter) or until a call pokes the loop; false
// when the plugin closed.
func (c *conn) sleep(d time.Duration) bool {
	d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.ctx.Done():
		return false
	case <-t.C:
	case <-c.wake:
	}
	return true
}

// connect opens a session and lists the tools, within ConnectTimeout.
func (c *conn) connect() (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.p.opts.ConnectTimeout)
	defer cancel()
	t, err := c.transport(ctx)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bread-mcp-client:" + c.cfg.Name, Version: "1"}, c.clientOptions())
	var so *mcp.ClientSessionOptions
	if c.cfg.ProtocolVersion != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: c.cfg.ProtocolVersion}
	}
	sess, err := client.Connect(ctx, t, so)
	if err != nil {
		return nil, core.Errorf(core.CodeToolError, "connecting to MCP server %s failed: %w", c.cfg.Name, err)
	}
	tools, err := c.list(ctx, sess)
	if err != nil {
		_ = sess.Close()
		return nil, err
	}
	features := c.featureTools(sess)
	c.mu.Lock()
	if c.ctx.Err() != nil {
		// Close ran while this attempt was connecting: it did not see the
		// session, so this attempt closes it.
		c.mu.Unlock()
		_ = sess.Close()
		return nil, c.ctx.Err()
	}
	c.session, c.tools, c.features, c.err = sess, tools, features, nil
	c.mu.Unlock()
	c.log().Info("bread: MCP server connected", "tools", len(tools), "protocol", sess.InitializeResult().ProtocolVersion)
	return sess, nil
}

// list reads every page of the server's tools and builds bread tools.
func (c *conn) list(ctx context.Context, sess *mcp.ClientSession) ([]core.Tool, error) {
	var all []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, core.Errorf(core.CodeToolError, "listing the tools of MCP server %s failed: %w", c.cfg.Name, err)
		}
		all = append(all, t)
	}
	return c.buildTools(all)
}

// refresh re-lists after notifications/tools/list_changed. A listing that
// fails keeps the previous tools.
func (c *conn) refresh(sess *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(c.ctx, c.p.opts.ConnectTimeout)
	defer cancel()
	tools, err := c.list(ctx, sess)
	if err != nil {
		if c.ctx.Err() == nil {
			c.log().Warn("bread: refreshing the tools of an MCP server after list_changed failed; keeping the previous ones", "reason", err.Error())
		}
		return
	}
	c.mu.Lock()
	if c.session == sess {
		c.tools = tools
	}
	c.mu.Unlock()
	c.log().Info("bread: MCP server changed its tools", "tools", len(tools))
}

func (c *conn) setDown(err error) {
	c.mu.Lock()
	c.session, c.err = nil, err
	c.mu.Unlock()
}

func (c *conn) current() *mcp.ClientSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// snapshot is the tools of the last listing and why the server is down.
func (c *conn) snapshot() ([]core.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools == nil || len(c.features) == 0 {
		return c.tools, c.err
	}
	return append(slices.Clip(c.tools), c.features...), c.err
}

func (c *conn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// broken closes a session whose transport failed, so the loop reconnects.
func (c *conn) broken(sess *mcp.ClientSession, err error) {
	c.mu.Lock()
	if c.session == sess {
		c.session = nil
		c.err = core.Errorf(core.CodeToolError, "MCP server %s is unreachable: %w", c.cfg.Name, err)
	}
	c.mu.Unlock()
	_ = sess.Close()
	c.poke()
}

func (c *conn) unavailable() error {
	_, err := c.snapshot()
	be := &core.BreadError{Code: core.CodeToolError, Message: "MCP server " + c.cfg.Name + " is not connected (reconnecting)", Context: map[string]any{"server": c.cfg.Name}}
	if err != nil {
		be.Cause = err
		be.Message += ": " + core.AsBreadError(err, core.CodeToolError).Message
	}
	return be
}

// close stops the loop and closes the session (for stdio, the process).
func (c *conn) close() {
	c.cancel()
	c.mu.Lock()
	sess := c.session
	c.session = nil
	c.mu.Unlock()
	if sess != nil {
		_ = sess.Close()
	}
	<-c.done
}

// transport builds the transport of one connection attempt.
func (c *conn) transport(ctx context.Context) (mcp.Transport, error) {
	if c.cfg.NewTransport != nil {
		return c.cfg.NewTransport()
	}
	if c.cfg.Transport == TransportHTTP {
		return &mcp.StreamableClientTransport{
			Endpoint:   c.cfg.URL,
			HTTPClient: &http.Client{Transport: &signingTransport{base: http.DefaultTransport, cfg: &c.cfg, creds: c.p.creds}},
		}, nil
	}
	cmd := exec.Command(c.cfg.Command, c.cfg.Args...)
	cmd.Dir = c.cfg.Dir
	env, err := c.childEnv(ctx)
	if err != nil {
		return nil, err
	}
	cmd.Env = env
	cmd.Stderr = &lineLogger{log: c.log()}
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
}

// baseEnv is what a stdio server inherits from bread's environment.
var baseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR", "TZ", "SYSTEMROOT", "GOCACHE", "GOPATH", "GOMODCACHE"}

func (c *conn) childEnv(ctx context.Context) ([]string, error) {
	var env []string
	for _, k := range baseEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range c.cfg.Env {
		env = append(env, k+"="+v)
	}
	for k, name := range c.cfg.CredentialEnv {
		v, err := c.p.creds.Get(ctx, name)
		if err != nil {
			return nil, core.AsBreadError(err, core.CodeCredentialUnavailable)
		}
		env = append(env, k+"="+v)
	}
	return env, nil
}

// lineLogger logs a stdio server's stderr line by line.
type lineLogger struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := indexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.log.Info("bread: MCP server stderr", "line", string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 4096 {
		l.log.Info("bread: MCP server stderr", "line", string(l.buf))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// signingTransport adds a server's headers, credential headers, auth and
// signer to every request, reading credentials per request.
type signingTransport struct {
	base  http.RoundTripper
	cfg   *Server
	creds core.CredentialProvider
}

func (t *signingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	r = r.Clone(ctx)
	for k, v := range t.cfg.Headers {
		r.Header.Set(k, v)
	}
	fail := func(err error) (*http.Response, error) {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	for k, name := range t.cfg.CredentialHeaders {
		v, err := t.creds.Get(ctx, name)
		if err != nil {
			return fail(core.AsBreadError(err, core.CodeCredentialUnavailable))
		}
		r.Header.Set(k, v)
	}
	if a := t.cfg.Auth; a != nil {
		v, err := t.creds.Get(ctx, a.Credential)
		if err != nil {
			return fail(core.AsBreadError(err, core.CodeCredentialUnavailable))
		}
		header, scheme := a.Header, a.Scheme
		if header == "" {
			header = "Authorization"
		}
		switch scheme {
		case "":
			v = "Bearer " + v
		case "none":
		default:
			v = scheme + " " + v
		}
		r.Header.Set(header, v)
	}
	if t.cfg.Signer != nil {
		if err := t.cfg.Signer.Sign(ctx, r.Header); err != nil {
			return fail(err)
		}
	}
	return t.base.RoundTrip(r)
}
