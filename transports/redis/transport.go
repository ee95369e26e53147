package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breadai/bread/core"
	goredis "github.com/redis/go-redis/v9"
)

// Transport is a duplex core.BreadBus on Redis Streams. It is safe for
// concurrent use. Create it with New; Close it when done.
type Transport struct {
	opts Options
	log  *limitedLog

	// pub serves writes, range reads and CLIENT UNBLOCK; sub serves the
	// connections subscriptions hold while they block. They are the same
	// client when the caller passed Options.Client.
	pub, sub goredis.UniversalClient
	owned    bool // the transport dialled pub and sub and closes them

	out        *outbox
	ids        entryIDs
	pubOnce    sync.Once
	pubStarted atomic.Bool
	pubStop    chan struct{} // closed by Close: the publisher exits
	pubDone    chan struct{} // closed when the publisher has exited
	degraded   atomic.Bool   // Redis is failing: a full queue drops without waiting
	closing    atomic.Bool
	closeOnce  sync.Once
	closeErr   error

	// closed ends every subscription; cancelled by Close.
	closed      context.Context
	cancelSubs  context.CancelFunc
	mu          sync.Mutex
	subsClosed  bool
	active      int            // subscriptions running
	idle        chan struct{}  // closed when active drops to 0 after Close
	tailing     map[string]int // run id -> subscriptions tailing live
	stats       counters
	unblockWait time.Duration // between CLIENT UNBLOCK retries
}

type counters struct {
	written, dropped, failures, readFailures, malformed, duplicates atomic.Uint64
}

var (
	_ core.BreadBus   = (*Transport)(nil)
	_ core.Subscriber = (*Transport)(nil)
	_ core.Starter    = (*Transport)(nil)
	_ io.Closer       = (*Transport)(nil)
)

// New returns a Transport. It does no I/O: Start checks the connection, and
// go-redis dials lazily. Bad options are a *core.BreadError with code
// INVALID_CONFIG.
func New(opts Options) (*Transport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Transport{
		opts:        opts,
		log:         newLimitedLog(opts.Logger, logEvery),
		out:         newOutbox(opts.QueueSize, opts.QueueBytes),
		pubStop:     make(chan struct{}),
		pubDone:     make(chan struct{}),
		tailing:     make(map[string]int),
		unblockWait: 50 * time.Millisecond,
	}
	if opts.Client != nil {
		t.pub, t.sub = opts.Client, opts.Client
	} else {
		co, err := goredis.ParseURL(opts.URL)
		if err != nil {
			// The cause may quote the URL and its password; the message never does.
			return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "redis transport: Options.URL is not a valid Redis URL", Cause: err}
		}
		readOpts := *co
		readOpts.PoolSize = opts.ReadPoolSize
		t.pub, t.sub, t.owned = goredis.NewClient(co), goredis.NewClient(&readOpts), true
	}
	t.closed, t.cancelSubs = context.WithCancel(context.Background())
	return t, nil
}

// Capability reports Duplex.
func (t *Transport) Capability() core.Capability { return core.Duplex }

// Start pings Redis, so a wrong URL or an unreachable server fails the boot
// rather than the first run. An outage after Start never fails a run.
func (t *Transport) Start(ctx context.Context) error {
	if t.closing.Load() {
		return ErrClosed
	}
	info, err := t.pub.Info(ctx, "server").Result()
	if err != nil {
		return &core.BreadError{Code: CodeTransportUnavailable, Message: "redis transport: cannot reach Redis: " + err.Error(), Cause: err}
	}
	if v, ok := redisVersion(info); ok && (v[0] < 6 || v[0] == 6 && v[1] < 2) {
		return &core.BreadError{Code: CodeTransportUnavailable, Message: fmt.Sprintf("redis transport: Redis %d.%d is too old; it needs 6.2 or later (XADD MINID keeps the frames the crumb log does not hold yet)", v[0], v[1])}
	}
	return nil
}

// redisVersion reads major.minor from INFO server; ok is false when the
// reply names none (a proxy, a compatible server that does not say).
func redisVersion(info string) (v [2]int, ok bool) {
	for line := range strings.Lines(info) {
		rest, found := strings.CutPrefix(strings.TrimSpace(line), "redis_version:")
		if !found {
			continue
		}
		parts := strings.SplitN(rest, ".", 3)
		if len(parts) < 2 {
			return v, false
		}
		var err1, err2 error
		v[0], err1 = strconv.Atoi(parts[0])
		v[1], err2 = strconv.Atoi(parts[1])
		return v, err1 == nil && err2 == nil
	}
	return v, false
}

// Ping reports whether Redis answers now (core.Pinger): the bus half of a
// readiness probe. A closed transport reports ErrClosed.
func (t *Transport) Ping(ctx context.Context) error {
	if t.closing.Load() {
		return ErrClosed
	}
	if err := t.pub.Ping(ctx).Err(); err != nil {
		return &core.BreadError{Code: CodeTransportUnavailable, Message: "redis transport: cannot reach Redis: " + err.Error(), Cause: err}
	}
	return nil
}

var _ core.Pinger = (*Transport)(nil)

// Client returns the client the transport writes with, so companions (a
// cancel bus, run leases) can share its connections. Do not close it.
func (t *Transport) Client() goredis.UniversalClient { return t.pub }

// StreamKey returns the key of a run's stream: KeyPrefix + "{" + runID + "}".
func (t *Transport) StreamKey(runID string) string { return streamKey(t.opts.KeyPrefix, runID) }

// Stats is a snapshot of the transport's counters.
type Stats struct {
	Queued   int    // frames waiting to be written
	Written  uint64 // frames appended to a stream
	Dropped  uint64 // frames dropped: queue overflow, rejected by Redis, or left at Close
	Failures uint64 // failed write attempts (each is retried)
	// ReadFailures counts failed subscription reads (each is retried).
	ReadFailures uint64
	Malformed    uint64 // stream entries subscriptions skipped as malformed
	// Duplicates counts frames written twice and not delivered twice: an
	// append Redis refused because its id was already written (a write
	// retried after a lost reply), or a durable frame a subscription
	// skipped because it repeated a seq already yielded (a stream written
	// with Redis's own ids, by an older bread).
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
// have replayed what the stream retained and are tailing it live.
func (t *Transport) Subscribers(runID string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tailing[runID]
}

// Flush waits until every frame published before the call has been written
// to Redis or dropped, or until ctx is done.
func (t *Transport) Flush(ctx context.Context) error { return t.out.flush(ctx) }

// Close stops the transport: Publish fails with ErrClosed from now on, every
// subscription ends (yielding ErrClosed), queued frames are written for up
// to CloseTimeout and the rest dropped with a warning, and clients the
// transport dialled are closed. A Client passed in Options stays open.
// Close is idempotent.
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
		t.opts.Logger.Warn("redis transport: closed with frames still queued; they were dropped", "frames", n)
	}

	if idle != nil {
		tm := time.NewTimer(time.Until(deadline))
		select {
		case <-idle:
		case <-tm.C:
			t.opts.Logger.Warn("redis transport: closing while subscriptions are still ranging")
		}
		tm.Stop()
	}

	if !t.owned {
		return nil
	}
	var errs []error
	for _, c := range []goredis.UniversalClient{t.pub, t.sub} {
		if err := c.Close(); err != nil && !errors.Is(err, goredis.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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
