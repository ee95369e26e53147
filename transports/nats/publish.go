package nats

import (
	"context"
	"errors"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// Publish queues f to be stored on its run's subject and returns. It never
// waits on NATS: only a full queue makes it wait, for at most
// Options.PublishTimeout, and only while NATS is healthy; then the oldest
// queued frames are dropped with a (rate-limited) warning. It fails only for
// a frame that cannot be encoded and after Close.
//
// The stream keeps every frame for MaxAge, so frames at or above the run's
// durable floor (f.Durable) are kept whatever their number.
func (t *Transport) Publish(ctx context.Context, f core.Frame) error {
	if t.closing.Load() {
		return ErrClosed
	}
	if f.RunID == "" {
		return &core.BreadError{Code: core.CodeValidationError, Message: "nats transport: a frame needs a run id"}
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
	res := t.out.push(ctx, pending{subject: t.Subject(f.RunID), payload: payload, pos: t.position(f)}, wait)
	if res.timedOut {
		// NATS is too slow to keep up; stop making every Publish wait
		// until a write succeeds again.
		t.degraded.Store(true)
	}
	if res.dropped > 0 {
		t.stats.dropped.Add(uint64(res.dropped))
		t.log.warn("drop", "nats transport: publish queue full; dropped the oldest frames",
			"dropped", res.dropped, "queueSize", t.opts.QueueSize)
	}
	return nil
}

func (t *Transport) startPublisher() {
	t.pubStarted.Store(true)
	go t.runPublisher()
}

// runPublisher writes the queue's frames in order, a window of
// asynchronous publishes at a time, until Close. A failed write is retried
// from the first frame not acknowledged, after a backoff; the message ids
// make the stream store a frame written twice once.
func (t *Transport) runPublisher() {
	defer close(t.pubDone)
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
		done, err := t.write(batch)
		if done > 0 {
			t.out.ack(done)
		}
		clear(batch) // the queue owns the payloads
		if err == nil {
			bo.reset()
			t.degraded.Store(false)
			continue
		}
		if errors.Is(err, ErrClosed) {
			return
		}
		t.degraded.Store(true)
		t.stats.failures.Add(1)
		t.log.warn("write", "nats transport: writing to JetStream failed; retrying, runs go on", "error", err)
		if isNoStream(err) {
			// A server restarted without its store, or the stream was
			// deleted: put it back before the retry.
			ctx, cancel := context.WithTimeout(context.Background(), t.opts.AckTimeout)
			if serr := t.ensureStream(ctx); serr != nil {
				t.log.warn("stream", "nats transport: creating the stream failed", "error", serr)
			}
			cancel()
		}
		if !sleep(t.pubStop, bo.delay()) {
			return
		}
	}
}

// write publishes batch asynchronously and waits for the acknowledgements
// in order. It returns the n of the last frame that is done with (stored,
// or refused by NATS for good) and the error that stopped the rest.
func (t *Transport) write(batch []pending) (uint64, error) {
	futures := make([]jetstream.PubAckFuture, 0, len(batch))
	var sendErr error
	for _, p := range batch {
		msg := &nats.Msg{Subject: p.subject, Data: p.payload, Header: nats.Header{posHeader: []string{p.pos}}}
		f, err := t.js.PublishMsgAsync(msg, jetstream.WithMsgID(t.idPrefix+strconv.FormatUint(p.n, 10)), jetstream.WithExpectStream(t.opts.Stream))
		if err != nil {
			sendErr = err
			break
		}
		futures = append(futures, f)
	}
	var done uint64
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			if ack.Duplicate {
				t.stats.duplicates.Add(1)
			} else {
				t.stats.written.Add(1)
			}
		case err := <-f.Err():
			if !permanent(err) {
				return done, err
			}
			// Retrying would wedge every run behind this one frame.
			t.stats.dropped.Add(1)
			t.log.warn("reject", "nats transport: JetStream refused a frame; dropped it", "subject", batch[i].subject, "error", err)
		case <-t.pubStop:
			return done, ErrClosed
		}
		done = batch[i].n
	}
	if sendErr != nil && len(futures) == 0 && permanent(sendErr) {
		t.stats.dropped.Add(1)
		t.log.warn("reject", "nats transport: a frame cannot be published; dropped it", "subject", batch[0].subject, "error", sendErr)
		return batch[0].n, nil
	}
	return done, sendErr
}

// permanent reports whether a publish error is one a retry cannot fix: a
// frame over the server's maximum payload, or a request JetStream refuses
// as bad. Lost connections, timeouts and a missing stream are retried.
func permanent(err error) bool {
	if errors.Is(err, nats.ErrMaxPayload) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 400 && apiErr.ErrorCode != jetstream.JSErrCodeStreamNotFound
	}
	return false
}

// isNoStream reports an error that means no stream captured the subject.
func isNoStream(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrStreamNotFound) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamNotFound)
}
