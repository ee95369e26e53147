package remoteagent

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// decoder reads one connection's frames. A *core.BreadError ends the run
// (a malformed frame, a failure the server sent as an error event); io.EOF
// or any other error is a dropped connection.
type decoder interface {
	next() (core.Frame, error)
}

func (c *Client) decoder(r io.Reader) decoder {
	if c.format == SSE {
		return newSSEDecoder(r, c.maxFrame)
	}
	return newNDJSONDecoder(r, c.maxFrame)
}

// Run posts the run and yields the remote crumbs as they arrive. A terminal
// agent:error is yielded paired with its error; a failure before the run
// existed (the SSE error event) is its code and message. A refused request
// or a failed connection is REMOTE_AGENT_ERROR, a malformed frame
// PROTOCOL_DECODE_ERROR, a cancelled ctx RUN_CANCELLED (never retried).
//
// When the connection drops before the terminal crumb, Run reconnects to
// GET /runs/{runId}/stream with Last-Event-ID, waiting RetryDelay, doubled
// after each reconnect that brought nothing, and relays only what it has
// not relayed yet (httpstream.Dedup's exact rule); after MaxRetries
// reconnects in a row without progress the run fails with
// REMOTE_AGENT_RECONNECT_FAILED. The stream also ends after human:required:
// the remote owns that checkpoint. A caller that stops ranging, or cancels,
// before the run's end has the remote run cancelled.
func (c *Client) Run(ctx context.Context, agentID string, input any, opts core.RunOptions) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		res, err := c.ep.StartRun(ctx, agentID, input, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		s := &relay{c: c, yield: yield}
		defer func() {
			if s.abandoned() {
				c.cancelRemote(ctx, s.runID)
			}
		}()
		attempts, delay := 0, c.retryDelay
		for {
			dropped := s.read(res.Body)
			res.Body.Close()
			if dropped == nil {
				return
			}
			if ctx.Err() != nil || s.runID == "" || !c.reconnect {
				s.fail(httpstream.TransportError(ctx, c.ep.URL, dropped))
				return
			}
			if s.progress {
				attempts, delay = 0, c.retryDelay
			}
			s.progress = false
			for {
				attempts++
				if attempts > c.maxRetries {
					s.fail(&core.BreadError{
						Code:    core.CodeRemoteReconnect,
						Message: "the remote agent's stream dropped and reconnecting failed",
						Context: map[string]any{"url": c.ep.URL, "agentId": agentID, "runId": s.runID, "lastSeq": s.dedup.Last, "attempts": attempts - 1},
						Cause:   dropped,
					})
					return
				}
				if !sleep(ctx, delay) {
					s.fail(httpstream.TransportError(ctx, c.ep.URL, ctx.Err()))
					return
				}
				delay = min(delay*2, maxRetryDelay)
				res, err = c.ep.TailRun(ctx, s.runID, s.dedup.Last)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					s.fail(err)
					return
				}
				dropped = err
			}
			// The passive stream replays the deltas of watermark Last from
			// their first byte; Dedup drops the part already relayed when
			// the server promises watermarks, else keeps the coarse rule.
			s.dedup.Restart(res.Header.Get(httpstream.DeltaSeqHeader) == httpstream.DeltaSeqWatermark)
		}
	}
}

// relay is the state of one remote run across its connections.
type relay struct {
	c        *Client
	yield    func(core.Crumb, error) bool
	runID    string
	dedup    httpstream.Dedup
	progress bool // the current connection relayed something new
	ended    bool // a crumb that ends the call (terminal, human:required) went out
	stopped  bool // yield returned false or the run failed: never yield again
}

// read relays the frames of one connection. It returns nil when the run's
// stream is over for this caller (its end, a failure, the consumer gone)
// and the read error, io.ErrUnexpectedEOF for a clean close, when the
// connection dropped before the end.
func (s *relay) read(body io.Reader) error {
	dec := s.c.decoder(body)
	for {
		f, err := dec.next()
		if err != nil {
			var be *core.BreadError
			if errors.As(err, &be) {
				s.fail(err)
				return nil
			}
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF // the stream ended before its terminal crumb
			}
			return err
		}
		if s.runID == "" {
			s.runID = f.RunID
			if s.runID == "" {
				s.runID = f.Crumb.Base().RunID
			}
		}
		g, ok := s.dedup.Frame(f)
		if !ok {
			continue
		}
		s.progress = true
		s.ended = core.EndsCall(g.Crumb)
		if !s.yield(g.Crumb, httpstream.CrumbError(g.Crumb)) {
			s.stopped = true
			return nil
		}
		if s.ended {
			return nil
		}
	}
}

// fail yields err unless the consumer is gone.
func (s *relay) fail(err error) {
	if !s.stopped {
		s.stopped = true
		s.yield(nil, err)
	}
}

// abandoned reports whether the caller leaves a detached remote run that
// has not ended.
func (s *relay) abandoned() bool {
	return s.c.reconnect && s.runID != "" && !s.ended
}

// cancelRemote asks the remote to cancel a run the caller gave up on,
// bounded by cancelTimeout even when ctx is already cancelled.
func (c *Client) cancelRemote(ctx context.Context, runID string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if err := c.ep.CancelRun(cctx, runID); err != nil {
		c.log.WarnContext(ctx, "bread: cancelling an abandoned remote run failed", "run_id", runID, "url", c.ep.URL, "error", err)
	}
}

// sleep waits d or until ctx ends; it reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
