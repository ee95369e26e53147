package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
	goredis "github.com/redis/go-redis/v9"
)

// Publish queues f to be appended to its run's stream and returns. It never
// waits on Redis: only a full queue makes it wait, for at most
// Options.PublishTimeout, and only while Redis is healthy; then the oldest
// queued frames are dropped with a (rate-limited) warning. It fails only for
// a frame that cannot be encoded and after Close.
//
// The entry's id is "<seq>-<n>", n a counter of this transport, so ids grow
// along a run (deltas share their watermark's seq; n orders them), a write
// retried after a lost reply is refused by Redis instead of appended twice,
// and a trim by id is a trim by seq. With f.Durable > 0 the append trims the
// stream to the entries at or above that floor (XADD MINID ~), keeping
// every frame the crumb log does not hold yet however many; with 0 (a run
// with no durable history) it trims to about MaxLen entries. The entry
// also names the run's entry before it, when this transport wrote that
// one, and the floor: what lets a subscription see a trim pass it.
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
	terminal := core.IsTerminal(f.Crumb.CrumbType())
	id, prev := t.ids.next(f.RunID, f.Seq, terminal)
	res := t.out.push(ctx, pending{
		key:      streamKey(t.opts.KeyPrefix, f.RunID),
		id:       id,
		prev:     prev,
		floor:    f.Durable,
		payload:  payload,
		terminal: terminal,
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
		values := make([]any, 0, 6)
		values = append(values, frameField, p.payload)
		if p.prev != "" {
			values = append(values, prevField, p.prev)
		}
		args := &goredis.XAddArgs{Stream: p.key, Approx: true, ID: p.id}
		if p.floor > 0 {
			floor := strconv.FormatInt(p.floor, 10)
			values = append(values, floorField, floor)
			args.MinID = floor + "-0"
		} else {
			args.MaxLen = t.opts.MaxLen
		}
		args.Values = values
		adds[i] = pipe.XAdd(ctx, args)
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
		case isDuplicateID(err):
			// Its id is not above the stream's last: a write Redis applied
			// before the reply was lost, now retried.
			t.stats.duplicates.Add(1)
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

// isDuplicateID reports Redis refusing an XADD whose explicit id is not
// above the stream's last entry.
func isDuplicateID(err error) bool {
	return strings.Contains(err.Error(), "equal or smaller than the target stream top item")
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

// maxLinkedRuns bounds the runs whose last entry id a transport remembers.
// Past it the memory is cleared: the next entry of each run is written
// without its predecessor, which only makes its readers check it by floor.
const maxLinkedRuns = 10000

// entryIDs assigns entry ids and remembers each run's last one, so the next
// entry can name it.
type entryIDs struct {
	mu   sync.Mutex
	n    uint64
	last map[string]string
}

// next returns the id of a run's next entry at seq and the id of the entry
// before it ("" when unknown). A terminal entry ends the run's memory.
func (e *entryIDs) next(runID string, seq int64, terminal bool) (id, prev string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	id = strconv.FormatInt(max(seq, 0), 10) + "-" + strconv.FormatUint(e.n, 10)
	prev = e.last[runID]
	switch {
	case terminal:
		delete(e.last, runID)
	default:
		if e.last == nil || len(e.last) >= maxLinkedRuns {
			e.last = make(map[string]string)
		}
		e.last[runID] = id
	}
	return id, prev
}
