package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/breadai/bread/core"
)

// CoordinatorOptions configure a Coordinator.
type CoordinatorOptions struct {
	// URL or Client reach Redis, as for the transport.
	URL    string
	Client goredis.UniversalClient
	// KeyPrefix prefixes lease keys (<prefix>lease:{<runId>}) and the
	// cancel channel (<prefix>cancel); default "bread:".
	KeyPrefix string
	// ReplicaID names this replica in its leases (default host-pid-random).
	ReplicaID string
	// LeaseTTL is how long a lease outlives its last renewal (default 10s).
	// A replica renews every LeaseTTL/3; a dead replica's runs are lost
	// LeaseTTL after it stopped.
	LeaseTTL time.Duration
	// Logger receives Redis failures (default slog.Default()).
	Logger *slog.Logger
}

// Coordinator lets replicas sharing one Redis act as one service:
//
//   - it is a core.BreadPlugin and core.RunLeaser: every run on this
//     replica holds a lease (a key with a TTL, renewed while the run runs);
//   - it is a server.Canceller: a cancel for a run another replica holds is
//     published on Redis, and the replica holding it cancels it;
//   - it is an httpstream.Liveness: a passive stream on any replica can tell
//     a run whose replica died (its lease expired) and end with RUN_LOST.
//
// A Redis outage never fails a run: leases are best effort, and a liveness
// check that cannot reach Redis does not declare anything lost.
type Coordinator struct {
	opts    CoordinatorOptions
	client  goredis.UniversalClient
	owned   bool
	log     *slog.Logger
	channel string

	mu   sync.Mutex
	held map[string]int // run id → holds on this replica
	// renewing serialises a renewal round with releases, so a renewal
	// never brings back a lease released while it was in flight.
	renewing sync.Mutex
	inst     core.Runtime
	stop     context.CancelFunc
	done     sync.WaitGroup
	pubsub   *goredis.PubSub
}

var (
	_ core.BreadPlugin  = (*Coordinator)(nil)
	_ core.RunLeaser    = (*Coordinator)(nil)
	_ core.PluginIniter = (*Coordinator)(nil)
	_ core.PluginCloser = (*Coordinator)(nil)
)

// NewCoordinator returns a coordinator; it connects at Init.
func NewCoordinator(opts CoordinatorOptions) (*Coordinator, error) {
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = "bread:"
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
	c := &Coordinator{opts: opts, log: opts.Logger, held: map[string]int{}, channel: opts.KeyPrefix + "cancel"}
	if c.log == nil {
		c.log = slog.Default()
	}
	if opts.Client != nil {
		c.client = opts.Client
	} else {
		co, err := goredis.ParseURL(opts.URL)
		if err != nil {
			return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "redis coordinator: URL is not a valid Redis URL", Cause: err}
		}
		c.client, c.owned = goredis.NewClient(co), true
	}
	return c, nil
}

// Name implements core.BreadPlugin.
func (c *Coordinator) Name() string { return "cluster" }

// ReplicaID returns the id this replica writes in its leases.
func (c *Coordinator) ReplicaID() string { return c.opts.ReplicaID }

func (c *Coordinator) leaseKey(runID string) string {
	return c.opts.KeyPrefix + "lease:{" + runID + "}"
}

// Init subscribes to cancel requests and starts renewing leases.
func (c *Coordinator) Init(ctx context.Context, inst core.Runtime) error {
	if err := c.client.Ping(ctx).Err(); err != nil {
		return &core.BreadError{Code: CodeTransportUnavailable, Message: "redis coordinator: cannot reach Redis: " + err.Error(), Cause: err}
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	c.mu.Lock()
	c.inst, c.stop = inst, stop
	c.pubsub = c.client.Subscribe(runCtx, c.channel)
	c.mu.Unlock()
	if _, err := c.pubsub.Receive(ctx); err != nil {
		stop()
		return &core.BreadError{Code: CodeTransportUnavailable, Message: "redis coordinator: cannot subscribe to cancels: " + err.Error(), Cause: err}
	}
	c.done.Go(func() { c.listen(runCtx) })
	c.done.Go(func() { c.renew(runCtx) })
	return nil
}

// listen cancels the runs this replica holds when another replica asks.
func (c *Coordinator) listen(ctx context.Context) {
	ch := c.pubsub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			if c.inst.Cancel(msg.Payload) {
				c.log.Info("bread: cancelled a run on request from another replica", c.runAttrs(msg.Payload)...)
			}
		}
	}
}

// renew keeps every held lease alive. Setting (not extending) each key
// also restores leases a Redis restart lost.
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
			c.mu.Unlock()
			if len(ids) > 0 {
				pipe := c.client.Pipeline()
				for _, id := range ids {
					pipe.Set(ctx, c.leaseKey(id), c.opts.ReplicaID, c.opts.LeaseTTL)
				}
				if _, err := pipe.Exec(ctx); err != nil && ctx.Err() == nil {
					c.log.Warn("bread: renewing run leases failed", "runs", len(ids), "error", err)
				}
			}
			c.renewing.Unlock()
		}
	}
}

// HoldLease implements core.RunLeaser.
func (c *Coordinator) HoldLease(ctx context.Context, runID string) func() {
	c.mu.Lock()
	c.held[runID]++
	c.mu.Unlock()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	if err := c.client.Set(wctx, c.leaseKey(runID), c.opts.ReplicaID, c.opts.LeaseTTL).Err(); err != nil {
		c.log.Warn("bread: taking a run lease failed; the run goes on", append(c.runAttrs(runID), "error", err)...)
	}
	cancel()
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

// releaseScript deletes a lease only if this replica holds it.
var releaseScript = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (c *Coordinator) release(runID string) {
	c.renewing.Lock()
	defer c.renewing.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := releaseScript.Run(ctx, c.client, []string{c.leaseKey(runID)}, c.opts.ReplicaID).Err(); err != nil && err != goredis.Nil {
		c.log.Warn("bread: releasing a run lease failed; it expires on its own", append(c.runAttrs(runID), "error", err)...)
	}
}

// runAttrs are the log attributes of runID. Its session and agent come
// from the store's run record: a run that has none (no core.RunStore, or a
// run whose record is not written yet, as when its first lease is taken)
// logs them empty.
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

// Alive reports whether some replica holds runID's lease.
func (c *Coordinator) Alive(ctx context.Context, runID string) (bool, error) {
	n, err := c.client.Exists(ctx, c.leaseKey(runID)).Result()
	return n > 0, err
}

// Holder returns the replica holding runID's lease, or "".
func (c *Coordinator) Holder(ctx context.Context, runID string) (string, error) {
	v, err := c.client.Get(ctx, c.leaseKey(runID)).Result()
	if err == goredis.Nil {
		return "", nil
	}
	return v, err
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
	if err := c.client.Publish(ctx, c.channel, runID).Err(); err != nil {
		return false, err
	}
	return true, nil
}

// Close stops listening and renewing, releases the leases still held and
// closes a client it created.
func (c *Coordinator) Close(ctx context.Context) error {
	c.mu.Lock()
	stop, ps := c.stop, c.pubsub
	held := make([]string, 0, len(c.held))
	for id := range c.held {
		held = append(held, id)
	}
	c.held = map[string]int{}
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	if ps != nil {
		_ = ps.Close()
	}
	c.done.Wait()
	for _, id := range held {
		c.release(id)
	}
	if c.owned {
		return c.client.Close()
	}
	return nil
}
