package httpsse

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strconv"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// Reconnect defaults of RemoteAgent.
const (
	DefaultMaxRetries = 5
	DefaultRetryDelay = 500 * time.Millisecond
	maxRetryDelay     = 30 * time.Second
)

// RemoteOptions locate and authenticate a remote bread and bound the
// reconnects.
type RemoteOptions struct {
	// URL is the remote server's base URL, for example http://research:3000.
	URL string
	// Headers are sent with every request, before Signer runs.
	Headers http.Header
	// Signer signs every request, reconnects included.
	Signer core.BreadSigner
	// HTTPClient sends the requests; nil is http.DefaultClient. Give it no
	// Timeout: a run streams for as long as it runs. Cancel through the
	// run's context instead.
	HTTPClient *http.Client
	// MaxRetries bounds the reconnects in a row that deliver nothing new
	// (default 5; negative disables reconnecting).
	MaxRetries int
	// RetryDelay is the wait before the first reconnect, doubled after each
	// failed one (default 500 ms).
	RetryDelay time.Duration
	// MaxEventBytes bounds one event (default 16 MiB).
	MaxEventBytes int
}

// Remote runs agents on another bread over its SSE routes.
type Remote struct {
	ep         httpstream.Endpoint
	maxRetries int
	retryDelay time.Duration
	maxEvent   int
}

var _ core.RemoteAgent = (*Remote)(nil)

// RemoteAgent returns a core.RemoteAgent for the bread at opts.URL.
func RemoteAgent(opts RemoteOptions) *Remote {
	r := &Remote{
		ep:         httpstream.Endpoint{URL: opts.URL, Headers: opts.Headers, Signer: opts.Signer, Client: opts.HTTPClient, Accept: httpstream.ContentTypeSSE},
		maxRetries: opts.MaxRetries,
		retryDelay: opts.RetryDelay,
		maxEvent:   opts.MaxEventBytes,
	}
	switch {
	case r.maxRetries == 0:
		r.maxRetries = DefaultMaxRetries
	case r.maxRetries < 0:
		r.maxRetries = 0
	}
	if r.retryDelay <= 0 {
		r.retryDelay = DefaultRetryDelay
	}
	if r.maxEvent <= 0 {
		r.maxEvent = DefaultMaxEventBytes
	}
	return r
}

// Run posts the run and yields the remote crumbs. A terminal agent:error is
// yielded paired with its error; an error event (a failure before the run
// existed) is its code and message. When the connection drops before the
// terminal crumb, Run reconnects to GET /runs/{runId}/stream with
// Last-Event-ID and skips what it already yielded (durable crumbs with
// seq <= last, deltas with seq < last), waiting RetryDelay, doubled each
// time; after MaxRetries reconnects in a row without progress the run fails
// with REMOTE_AGENT_RECONNECT_FAILED. A cancelled ctx is RUN_CANCELLED and is
// never retried. The stream also ends after human:required: the remote owns
// that checkpoint.
func (r *Remote) Run(ctx context.Context, agentID string, input any, opts core.RunOptions) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		res, err := r.ep.StartRun(ctx, agentID, input, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		st := &session{r: r, yield: yield}
		attempts, delay := 0, r.retryDelay
		for {
			dropped := st.read(res.Body)
			res.Body.Close()
			if dropped == nil {
				return
			}
			if ctx.Err() != nil {
				yield(nil, httpstream.TransportError(ctx, r.ep.URL, dropped))
				return
			}
			if st.runID == "" {
				yield(nil, httpstream.TransportError(ctx, r.ep.URL, dropped))
				return
			}
			if st.progress {
				attempts, delay = 0, r.retryDelay
			}
			st.progress = false
			for {
				attempts++
				if attempts > r.maxRetries {
					yield(nil, &core.BreadError{
						Code:    core.CodeRemoteReconnect,
						Message: "the remote agent's stream dropped and reconnecting failed",
						Context: map[string]any{"url": r.ep.URL, "agentId": agentID, "runId": st.runID, "lastSeq": st.dedup.Last, "attempts": attempts - 1},
						Cause:   dropped,
					})
					return
				}
				if !sleep(ctx, delay) {
					yield(nil, httpstream.TransportError(ctx, r.ep.URL, ctx.Err()))
					return
				}
				delay = min(delay*2, maxRetryDelay)
				res, err = r.ep.TailRun(ctx, st.runID, st.dedup.Last)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					yield(nil, err)
					return
				}
				dropped = err
			}
		}
	}
}

// session is the state of one remote run across its connections.
type session struct {
	r        *Remote
	yield    func(core.Crumb, error) bool
	runID    string
	dedup    httpstream.Dedup
	progress bool // a reconnect delivered something new
}

type wireEvent struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// read yields the events of one connection. It returns nil when the run's
// stream is over (terminal crumb, error event, malformed event, consumer
// gone) and the read error when the connection dropped.
func (s *session) read(body io.Reader) error {
	er := newEventReader(body, s.r.maxEvent)
	for {
		ev, err := er.next()
		if err != nil {
			var be *core.BreadError
			if errors.As(err, &be) {
				s.yield(nil, err)
				return nil
			}
			if err == io.EOF {
				return io.ErrUnexpectedEOF // the stream ended before its terminal crumb
			}
			return err
		}
		c, seq, err := decodeEvent(ev)
		if err != nil {
			s.yield(nil, err)
			return nil
		}
		if s.runID == "" {
			s.runID = c.Base().RunID
		}
		if seq > 0 && !s.dedup.Accept(seq, c.CrumbType()) {
			continue
		}
		s.progress = true
		if !s.yield(c, httpstream.CrumbError(c)) {
			return nil
		}
		if core.EndsCall(c) {
			return nil
		}
	}
}

// decodeEvent turns one event into a crumb and its seq (the event id, or the
// crumb's own seq without one). An error event is returned as its error.
func decodeEvent(ev event) (core.Crumb, int64, error) {
	var w wireEvent
	if err := json.Unmarshal(ev.data, &w); err != nil || w.Type == "" {
		return nil, 0, malformed(ev.data, err)
	}
	if w.Type == httpstream.SSEErrorEvent {
		var ce core.ClientError
		if err := json.Unmarshal(w.Payload, &ce); err != nil || ce.Code == "" {
			return nil, 0, malformed(ev.data, err)
		}
		return nil, 0, &core.BreadError{Code: ce.Code, Message: ce.Message}
	}
	c, err := core.DecodeCrumb(w.Payload)
	if err != nil {
		return nil, 0, err
	}
	if c.CrumbType() != w.Type {
		return nil, 0, malformed(ev.data, nil)
	}
	seq := c.Base().Seq
	if ev.hasID {
		if n, err := strconv.ParseInt(ev.id, 10, 64); err == nil && n > 0 {
			seq = n
		}
	}
	return c, seq, nil
}

func malformed(data []byte, cause error) error {
	raw := string(data)
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return &core.BreadError{Code: core.CodeProtocolDecodeError, Message: `malformed SSE crumb event: expected {"type","payload"}`, Context: map[string]any{"raw": raw}, Cause: cause}
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
