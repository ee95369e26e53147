package nats

import (
	"context"
	"crypto/rand"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
)

// Transport is a duplex core.BreadBus on NATS JetStream. It is safe for
// concurrent use. Create it with New; Close it when done.
type Transport struct {
	opts  Options
	log   *limitedLog
	conn  *nats.Conn
	owned bool // the transport dialled conn and closes it
	js    jetstream.JetStream
	// idPrefix starts this transport's Nats-Msg-Ids, so two replicas'
	// frames never collide in the stream's duplicate window.
	idPrefix string

	// positions numbers the frames each run publishes through this
	// transport (see runPos); an entry lives until the call's last frame.
	posMu     sync.Mutex
	positions map[string]*runPos
	epochs    uint64

	out        *outbox
	pubOnce    sync.Once
	pubStarted atomic.Bool
	pubStop    chan struct{} // closed by Close: the publisher exits
	pubDone    chan struct{} // closed when the publisher has exited
	degraded   atomic.Bool   // NATS is failing: a full queue drops without waiting
	closing    atomic.Bool
	closeOnce  sync.Once
	closeErr   error

	// closed ends every subscription; cancelled by Close.
	closed     context.Context
	cancelSubs context.CancelFunc
	mu         sync.Mutex
	subsClosed bool
	active     int            // subscriptions running
	idle       chan struct{}  // closed when active drops to 0 after Close
	tailing    map[string]int // run id -> subscriptions following live
	stats      counters
}

type counters struct {
	written, dropped, failures, readFailures, malformed, duplicates atomic.Uint64
}

var (
	_ core.BreadBus   = (*Transport)(nil)
	_ core.Subscriber = (*Transport)(nil)
	_ core.Starter    = (*Transport)(nil)
	_ core.Pinger     = (*Transport)(nil)
	_ io.Closer       = (*Transport)(nil)
)

// New returns a Transport. With a URL it dials in the background (a
// server that is down is retried, never an error here); Start checks the
// connection and creates the stream. Bad options are a *core.BreadError
// with code INVALID_CONFIG.
func New(opts Options) (*Transport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Transport{
		opts:      opts,
		log:       newLimitedLog(opts.Logger, logEvery),
		out:       newOutbox(opts.QueueSize, opts.QueueBytes),
		pubStop:   make(chan struct{}),
		pubDone:   make(chan struct{}),
		tailing:   make(map[string]int),
		positions: make(map[string]*runPos),
		idPrefix:  rand.Text()[:13] + "-",
	}
	if opts.Conn != nil {
		t.conn = opts.Conn
	} else {
		if t.conn, err = Dial(opts.URL, "bread bus"); err != nil {
			return nil, err
		}
		t.owned = true
	}
	t.js, err = jetstream.New(t.conn, jetstream.WithPublishAsyncTimeout(opts.AckTimeout))
	if err != nil {
		if t.owned {
			t.conn.Close()
		}
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats transport: " + err.Error(), Cause: err}
	}
	t.closed, t.cancelSubs = context.WithCancel(context.Background())
	return t, nil
}

// Dial connects to url the way the transport and the coordinator do:
// reconnecting for ever, and returning a reconnecting connection when the
// server is down at first. A URL that is not a NATS URL is INVALID_CONFIG;
// the message never quotes it, as it may hold a password.
func Dial(rawURL, name string) (*nats.Conn, error) {
	if err := checkURL(rawURL); err != nil {
		return nil, err
	}
	nc, err := nats.Connect(rawURL,
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.RetryOnFailedConnect(true),
		// The server is told who we are, not warned by a callback per
		// reconnect: the transport logs failures it meets itself.
		nats.NoCallbacksAfterClientClose(),
	)
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats: cannot use the URL: " + redactErr(err, rawURL), Cause: err}
	}
	return nc, nil
}

// checkURL accepts what nats.Connect does: comma-separated nats://,
// tls://, ws:// or wss:// URLs, or host:port.
func checkURL(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats: the URL is empty"}
	}
	for part := range strings.SplitSeq(raw, ",") {
		part = strings.TrimSpace(part)
		if !strings.Contains(part, "://") {
			part = "nats://" + part
		}
		u, err := url.Parse(part)
		if err != nil || u.Host == "" {
			return &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats: the URL is not a NATS URL (nats://host:4222)"}
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats: the URL's scheme " + u.Scheme + " is not nats, tls, ws or wss"}
		}
	}
	return nil
}

func redactErr(err error, rawURL string) string {
	msg := err.Error()
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "***")
		}
	}
	return msg
}

// Capability reports Duplex.
func (t *Transport) Capability() core.Capability { return core.Duplex }

// startTimeout bounds Start's wait for NATS when its context has no
// deadline: a down server fails the boot rather than hanging it.
const startTimeout = 10 * time.Second

// Start checks that JetStream answers and creates (or updates) the stream,
// so a wrong URL or a server without JetStream fails the boot rather than
// the first run. An outage after Start never fails a run.
func (t *Transport) Start(ctx context.Context) error {
	if t.closing.Load() {
		return ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := t.ensureStream(ctx); err != nil {
		return &core.BreadError{Code: CodeTransportUnavailable, Message: "nats transport: cannot reach JetStream: " + err.Error(), Cause: err}
	}
	return nil
}

// ensureStream creates the stream, or updates it to these options.
func (t *Transport) ensureStream(ctx context.Context) error {
	storage := jetstream.FileStorage
	if t.opts.Memory {
		storage = jetstream.MemoryStorage
	}
	_, err := t.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        t.opts.Stream,
		Description: "bread: every run's crumb frames, one subject per run",
		Subjects:    []string{t.opts.SubjectPrefix + ".>"},
		Storage:     storage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      t.opts.MaxAge,
		MaxBytes:    t.opts.MaxBytes,
		MaxMsgs:     -1,
		Replicas:    t.opts.Replicas,
		Duplicates:  2 * time.Minute,
	})
	return err
}

// Ping reports whether NATS answers now (core.Pinger): the bus half of a
// readiness probe. A closed transport reports ErrClosed.
func (t *Transport) Ping(ctx context.Context) error {
	if t.closing.Load() {
		return ErrClosed
	}
	if err := flush(ctx, t.conn); err != nil {
		return &core.BreadError{Code: CodeTransportUnavailable, Message: "nats transport: cannot reach NATS: " + err.Error(), Cause: err}
	}
	return nil
}

// Conn returns the connection the transport uses, so companions can share
// it. Do not close it.
func (t *Transport) Conn() *nats.Conn { return t.conn }

// Subject returns the subject of a run's frames.
func (t *Transport) Subject(runID string) string { return t.opts.SubjectPrefix + "." + runToken(runID) }

// Stats is a snapshot of the transport's counters.
type Stats struct {
	Queued   int    // frames waiting to be written
	Written  uint64 // frames stored by the stream
	Dropped  uint64 // frames dropped: queue overflow, refused by NATS, or left at Close
	Failures uint64 // failed write attempts (each is retried)
	// ReadFailures counts subscriptions recreated after a failure.
	ReadFailures uint64
	Malformed    uint64 // messages subscriptions skipped as malformed
	// Duplicates counts frames written twice and not delivered twice: a
	// write the stream had already stored (retried after a lost
	// acknowledgement), or a durable frame a subscription skipped because
	// it repeated a seq already yielded.
	Duplicates uint64
}

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	return Stats{
		Queued:       t.out.len(),
		Written:      t.stats.written.Load(),
		Dropped:      t.stats.dropped.Load(),
		Failures:     t.stats.failures.Load(),
		ReadFailures: t.stats.readFailures.Load(),
		Malformed:    t.stats.malformed.Load(),
		Duplicates:   t.stats.duplicates.Load(),
	}
}

// Subscribers returns how many of this transport's subscriptions of runID
// have their consumer on the stream: every frame published from then on
// reaches them.
func (t *Transport) Subscribers(runID string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tailing[runID]
}

// Flush waits until every frame published before the call has been stored
// by the stream or dropped, or until ctx is done.
func (t *Transport) Flush(ctx context.Context) error { return t.out.flush(ctx) }

// Close stops the transport: Publish fails with ErrClosed from now on, every
// subscription ends (yielding ErrClosed), queued frames are written for up
// to CloseTimeout and the rest dropped with a warning, and a connection the
// transport dialled is closed. A Conn passed in Options stays open. Close
// is idempotent.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() { t.closeErr = t.close() })
	return t.closeErr
}

func (t *Transport) close() error {
	t.closing.Store(true)
	deadline := time.Now().Add(t.opts.CloseTimeout)

	t.mu.Lock()
	t.subsClosed = true
	var idle chan struct{}
	if t.active > 0 {
		idle = make(chan struct{})
		t.idle = idle
	}
	t.mu.Unlock()
	t.cancelSubs()

	t.pubOnce.Do(func() {}) // no publisher may start from now on
	if t.pubStarted.Load() {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		_ = t.out.flush(ctx)
		cancel()
		close(t.pubStop)
		<-t.pubDone
	}
	if n := t.out.drain(); n > 0 {
		t.stats.dropped.Add(uint64(n))
		t.opts.Logger.Warn("nats transport: closed with frames still queued; they were dropped", "frames", n)
	}

	if idle != nil {
		tm := time.NewTimer(time.Until(deadline))
		select {
		case <-idle:
		case <-tm.C:
			t.opts.Logger.Warn("nats transport: closing while subscriptions are still ranging")
		}
		tm.Stop()
	}
	if t.owned {
		t.conn.Close()
	}
	return nil
}

// enter registers a subscription; it reports false after Close.
func (t *Transport) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.subsClosed {
		return false
	}
	t.active++
	return true
}

func (t *Transport) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active--
	if t.active == 0 && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

func (t *Transport) setTailing(runID string, delta int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.tailing[runID] + delta; n > 0 {
		t.tailing[runID] = n
	} else {
		delete(t.tailing, runID)
	}
}

// flush waits for the server's answer to a ping, for at most startTimeout
// when ctx has no deadline (nats.go wants one).
func flush(ctx context.Context, nc *nats.Conn) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	return nc.FlushWithContext(ctx)
}
