package redis

import (
	"context"
	"errors"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
	goredis "github.com/redis/go-redis/v9"
)

// Publish queues f to be appended to its run's stream and returns. It never
// waits on Redis: only a full queue makes it wait, for at most
// Options.PublishTimeout, and only while Redis is healthy; then the oldest
// queued frames are dropped with a (rate-limited) warning. It fails only for
// a frame that cannot be encoded and after Close.
func (t *Transport) Publish(ctx context.Context, f core.Frame) error {
	if t.closing.Load() {
		return ErrClosed
	}
	if f.RunID == "" {
		return &core.BreadError{Code: core.CodeValidationError, Message: "redis transport: a frame needs a run id"}
	}
	payload, err := protocol.EncodeCrumbFrame(f)
	if err != nil {
		return err
	}
	t.pubOnce.Do(t.startPublisher)
	wait := t.opts.PublishTimeout
	if t.degraded.Load() {
		wait = 0
	}
	res := t.out.push(ctx, pending{
		key:      streamKey(t.opts.KeyPrefix, f.RunID),
		payload:  payload,
		terminal: core.IsTerminal(f.Crumb.CrumbType()),
	}, wait)
	if res.timedOut {
		// Redis is too slow to keep up; stop making every Publish wait
		// until a write succeeds again.
		t.degraded.Store(true)
	}
	if res.dropped > 0 {
		t.stats.dropped.Add(uint64(res.dropped))
		t.log.warn("drop", "redis transport: publish queue full; dropped the oldest frames",
			"dropped", res.dropped, "queueSize", t.opts.QueueSize)
	}
	return nil
}

func (t *Transport) startPublisher() {
	t.pubStarted.Store(true)
	go t.runPublisher()
}

// runPublisher writes the queue's frames in order, one pipeline at a time,
// until Close. A failed write is retried from the first frame not written,
// after a backoff.
func (t *Transport) runPublisher() {
	defer close(t.pubDone)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancelling makes go-redis give up waiting for a pooled connection
		// or a dial; a command already sent ends within its read timeout.
		select {
		case <-t.pubStop:
			cancel()
		case <-ctx.Done():
		}
	}()
	bo := newBackoff()
	var batch []pending
	for {
		batch = t.out.peek(batch[:0], t.opts.BatchSize, batchBytes)
		if len(batch) == 0 {
			select {
			case <-t.out.ready:
				continue
			case <-t.pubStop:
				return
			}
		}
		done, err := t.write(ctx, batch)
		if done > 0 {
			t.out.ack(done)
		}
		clear(batch) // the queue owns the payloads
		if err == nil {
			bo.reset()
			t.degraded.Store(false)
			continue
		}
		t.degraded.Store(true)
		t.stats.failures.Add(1)
		t.log.warn("write", "redis transport: writing to Redis failed; retrying, runs go on", "error", err)
		if !sleep(t.pubStop, bo.delay()) {
			return
		}
	}
}

// write appends batch in one pipeline and sets each touched stream's expiry.
// It returns the n of the last frame that is done with (written, or refused
// by Redis for good) and the error that stopped the rest, if any.
func (t *Transport) write(ctx context.Context, batch []pending) (uint64, error) {
	pipe := t.pub.Pipeline()
	adds := make([]*goredis.StringCmd, len(batch))
	type expiry struct {
		key      string
		terminal bool
	}
	var keys []expiry // in first-seen order; batches hold few runs
	for i, p := range batch {
		adds[i] = pipe.XAdd(ctx, &goredis.XAddArgs{
			Stream: p.key,
			MaxLen: t.opts.MaxLen,
			Approx: true,
			ID:     "*",
			Values: []any{frameField, p.payload},
		})
		found := false
		for j := range keys {
			if keys[j].key == p.key {
				keys[j].terminal = keys[j].terminal || p.terminal
				found = true
				break
			}
		}
		if !found {
			keys = append(keys, expiry{p.key, p.terminal})
		}
	}
	// After the appends, so an expiry never lands on a key before it exists.
	for _, k := range keys {
		ttl := t.opts.IdleTTL
		if k.terminal {
			ttl = t.opts.TTL
		}
		if ttl > 0 {
			pipe.PExpire(ctx, k.key, ttl)
		}
	}
	_, _ = pipe.Exec(ctx) // errors are read per command below

	var done uint64
	for i, cmd := range adds {
		err := cmd.Err()
		switch {
		case err == nil:
			t.stats.written.Add(1)
		case permanent(err):
			// Retrying would wedge every run behind this one frame.
			t.stats.dropped.Add(1)
			t.log.warn("reject", "redis transport: Redis refused a frame; dropped it", "key", batch[i].key, "error", err)
		default:
			return done, err
		}
		done = batch[i].n
	}
	return done, nil
}

// permanent reports whether err is an error reply that a retry cannot fix
// (WRONGTYPE: the key holds something else). Network errors, timeouts and
// replies of a server that is loading, failing over or out of memory are
// worth retrying.
func permanent(err error) bool {
	var rerr goredis.Error
	if errors.Is(err, goredis.Nil) || !errors.As(err, &rerr) {
		return false
	}
	msg := rerr.Error()
	for _, transient := range []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY", "OOM", "NOREPLICAS", "MOVED", "ASK", "ERR max number of clients"} {
		if strings.HasPrefix(msg, transient) {
			return false
		}
	}
	return true
}
