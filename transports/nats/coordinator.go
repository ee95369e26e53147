package nats

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
)

// CoordinatorOptions configure a Coordinator.
type CoordinatorOptions struct {
	// URL or Conn reach NATS, as for the transport. A coordinator dialled
	// from URL closes its connection on Close.
	URL  string
	Conn *nats.Conn
	// Bucket names the coordinator's key-value bucket (<Bucket>_leases)
	// and its cancel subject (<Bucket>.cancel). Default "bread"; letters,
	// digits, '-' and '_' only. Replicas of one app share it.
	Bucket string
	// ReplicaID names this replica in its leases (default host-pid-random).
	ReplicaID string
	// LeaseTTL is how long a lease outlives its last renewal (default 10s):
	// the bucket's TTL. A replica renews every LeaseTTL/3; a dead
	// replica's runs are lost LeaseTTL after it stopped.
	LeaseTTL time.Duration
	// Logger receives NATS failures (default slog.Default()).
	Logger *slog.Logger
}

// Coordinator lets replicas sharing one NATS act as one service:
//
//   - it is a core.BreadPlugin and core.RunLeaser: every run on this
//     replica holds a lease (a key of a JetStream key-value bucket whose
//     TTL is the lease's, written again while the run runs);
//   - it is a server.Canceller: a cancel for a run another replica holds is
//     published on NATS, and the replica holding it cancels it;
//   - it is an httpstream.Liveness: a passive stream on any replica can tell
//     a run whose replica died (its lease expired) and end with RUN_LOST.
//
// A NATS outage never fails a run: leases are best effort, and a liveness
// check that cannot reach NATS does not declare anything lost.
type Coordinator struct {
	opts    CoordinatorOptions
	conn    *nats.Conn
	owned   bool
	js      jetstream.JetStream
	log     *slog.Logger
	subject string

	mu   sync.Mutex
	kv   jetstream.KeyValue // set by Init
	held map[string]int     // run id → holds on this replica
	// renewing serialises a renewal round with releases, so a renewal
	// never brings back a lease released while it was in flight.
	renewing sync.Mutex
	inst     core.Runtime
	stop     context.CancelFunc
	done     sync.WaitGroup
	sub      *nats.Subscription
}

var (
	_ core.BreadPlugin  = (*Coordinator)(nil)
	_ core.RunLeaser    = (*Coordinator)(nil)
	_ core.PluginIniter = (*Coordinator)(nil)
	_ core.PluginCloser = (*Coordinator)(nil)
)

var bucketName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// NewCoordinator returns a coordinator; it creates its bucket at Init.
func NewCoordinator(opts CoordinatorOptions) (*Coordinator, error) {
	if opts.Bucket == "" {
		opts.Bucket = "bread"
	}
	if !bucketName.MatchString(opts.Bucket) {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats coordinator: Bucket must be letters, digits, '-' and '_'"}
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 10 * time.Second
	}
	if opts.ReplicaID == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		opts.ReplicaID = host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
	}
	c := &Coordinator{opts: opts, log: opts.Logger, held: map[string]int{}, subject: opts.Bucket + ".cancel"}
	if c.log == nil {
		c.log = slog.Default()
	}
	switch {
	case opts.Conn != nil && opts.URL != "":
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats coordinator: set only one of URL and Conn"}
	case opts.Conn != nil:
		c.conn = opts.Conn
	default:
		conn, err := Dial(opts.URL, "bread coordinator")
		if err != nil {
			return nil, err
		}
		c.conn, c.owned = conn, true
	}
	js, err := jetstream.New(c.conn)
	if err != nil {
		if c.owned {
			c.conn.Close()
		}
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats coordinator: " + err.Error(), Cause: err}
	}
	c.js = js
	return c, nil
}

// Name implements core.BreadPlugin.
func (c *Coordinator) Name() string { return "cluster" }

// ReplicaID returns the id this replica writes in its leases.
func (c *Coordinator) ReplicaID() string { return c.opts.ReplicaID }

// Init creates (or opens) the lease bucket, subscribes to cancel requests
// and starts renewing leases.
func (c *Coordinator) Init(ctx context.Context, inst core.Runtime) error {
	ictx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	kv, err := c.js.CreateOrUpdateKeyValue(ictx, jetstream.KeyValueConfig{
		Bucket:      c.opts.Bucket + "_leases",
		Description: "bread: run leases, one key per running run, the value its replica",
		TTL:         c.opts.LeaseTTL,
		History:     1,
		Storage:     jetstream.FileStorage,
	})
	if err != nil {
		return &core.BreadError{Code: CodeTransportUnavailable, Message: "nats coordinator: cannot create the lease bucket: " + err.Error(), Cause: err}
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	c.mu.Lock()
	c.kv, c.inst, c.stop = kv, inst, stop
	c.mu.Unlock()
	// The subscription's callbacks run on the connection's own delivery
	// goroutine, which Close ends by unsubscribing.
	sub, err := c.conn.Subscribe(c.subject, func(m *nats.Msg) {
		runID := string(m.Data)
		if inst.Cancel(runID) {
			c.log.Info("bread: cancelled a run on request from another replica", c.runAttrs(runID)...)
		}
	})
	if err == nil {
		err = c.conn.FlushWithContext(ictx)
	}
	if err != nil {
		stop()
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		return &core.BreadError{Code: CodeTransportUnavailable, Message: "nats coordinator: cannot subscribe to cancels: " + err.Error(), Cause: err}
	}
	c.mu.Lock()
	c.sub = sub
	c.mu.Unlock()
	c.done.Go(func() { c.renew(runCtx) })
	return nil
}

func (c *Coordinator) bucket() jetstream.KeyValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kv
}

// renew keeps every held lease alive by writing it again: each write is a
// new message, so its age (the bucket's TTL) starts over. Writing (not
// updating) also restores leases a server restart without its store lost.
func (c *Coordinator) renew(ctx context.Context) {
	t := time.NewTicker(c.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.renewing.Lock()
			c.mu.Lock()
			ids := make([]string, 0, len(c.held))
			for id := range c.held {
				ids = append(ids, id)
			}
			kv := c.kv
			c.mu.Unlock()
			var failed int
			var lastErr error
			for _, id := range ids {
				wctx, cancel := context.WithTimeout(ctx, time.Second)
				if _, err := kv.PutString(wctx, runToken(id), c.opts.ReplicaID); err != nil {
					failed, lastErr = failed+1, err
				}
				cancel()
			}
			if failed > 0 && ctx.Err() == nil {
				c.log.Warn("bread: renewing run leases failed", "runs", failed, "error", lastErr)
			}
			c.renewing.Unlock()
		}
	}
}

// HoldLease implements core.RunLeaser.
func (c *Coordinator) HoldLease(ctx context.Context, runID string) func() {
	c.mu.Lock()
	c.held[runID]++
	kv := c.kv
	c.mu.Unlock()
	if kv != nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		if _, err := kv.PutString(wctx, runToken(runID), c.opts.ReplicaID); err != nil {
			c.log.Warn("bread: taking a run lease failed; the run goes on", append(c.runAttrs(runID), "error", err)...)
		}
		cancel()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.held[runID]--
			last := c.held[runID] <= 0
			if last {
				delete(c.held, runID)
			}
			c.mu.Unlock()
			if last {
				c.release(runID)
			}
		})
	}
}

// release deletes runID's lease if this replica still holds it: the
// delete is conditioned on the revision it read.
func (c *Coordinator) release(runID string) {
	c.renewing.Lock()
	defer c.renewing.Unlock()
	kv := c.bucket()
	if kv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	e, err := kv.Get(ctx, runToken(runID))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return
	}
	if err == nil && string(e.Value()) != c.opts.ReplicaID {
		return
	}
	if err == nil {
		err = kv.Delete(ctx, runToken(runID), jetstream.LastRevision(e.Revision()))
	}
	if err != nil {
		c.log.Warn("bread: releasing a run lease failed; it expires on its own", append(c.runAttrs(runID), "error", err)...)
	}
}

// runAttrs are the log attributes of runID, its session and agent from
// the store's run record when there is one.
func (c *Coordinator) runAttrs(runID string) []any {
	c.mu.Lock()
	inst := c.inst
	c.mu.Unlock()
	var session, agent string
	if inst != nil {
		if st := inst.Storage(); st.Has(core.StoreRuns) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if rec, err := st.GetRun(ctx, runID); err == nil {
				session, agent = rec.SessionID, rec.AgentID
			}
			cancel()
		}
	}
	return core.RunLogAttrs(runID, session, agent)
}

// errNotStarted is returned by the queries of a coordinator whose Init has
// not run: it has no bucket to read.
var errNotStarted = &core.BreadError{Code: CodeTransportUnavailable, Message: "nats coordinator: not started"}

// Alive reports whether some replica holds runID's lease. An error means
// NATS did not answer, not that the run is lost.
func (c *Coordinator) Alive(ctx context.Context, runID string) (bool, error) {
	holder, err := c.Holder(ctx, runID)
	return holder != "", err
}

// Holder returns the replica holding runID's lease, or "".
func (c *Coordinator) Holder(ctx context.Context, runID string) (string, error) {
	kv := c.bucket()
	if kv == nil {
		return "", errNotStarted
	}
	e, err := kv.Get(ctx, runToken(runID))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(e.Value()), nil
}

// Cancel cancels a run wherever it runs: here directly, elsewhere by
// publishing the request to the replica holding it. It reports whether the
// run was found (running here, or leased by a replica).
func (c *Coordinator) Cancel(ctx context.Context, runID string) (bool, error) {
	c.mu.Lock()
	inst := c.inst
	c.mu.Unlock()
	if inst != nil && inst.Cancel(runID) {
		return true, nil
	}
	holder, err := c.Holder(ctx, runID)
	if err != nil || holder == "" {
		return false, err
	}
	if err := c.conn.Publish(c.subject, []byte(runID)); err != nil {
		return false, err
	}
	if err := flush(ctx, c.conn); err != nil {
		return false, err
	}
	return true, nil
}

// Close stops listening and renewing, releases the leases still held and
// closes a connection it dialled.
func (c *Coordinator) Close(ctx context.Context) error {
	c.mu.Lock()
	stop, sub := c.stop, c.sub
	held := make([]string, 0, len(c.held))
	for id := range c.held {
		held = append(held, id)
	}
	c.held = map[string]int{}
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	if sub != nil {
		_ = sub.Unsubscribe()
	}
	c.done.Wait()
	for _, id := range held {
		c.release(id)
	}
	if c.owned {
		c.conn.Close()
	}
	return nil
}
