package httpstream

import (
	"context"
	"iter"
	"net/http"
	"strconv"

	"github.com/breadai/bread/core"
)

// The run-starting routes pass the request's context to the Instance: a
// client that disconnects cancels its run, which ends with RUN_CANCELLED in
// the crumb log. A body with "detach": true keeps the run going when its
// client leaves (a browser that reloads its page and follows the run on
// the passive stream); POST /runs/{runId}/cancel and the instance's Stop
// still end it.

// runContext is the context a run starts under.
func runContext(r *http.Request, detach bool) context.Context {
	if detach {
		return context.WithoutCancel(r.Context())
	}
	return r.Context()
}

// Every refusal of a run-starting route that concerns the run (an unknown
// or internal agent or pipeline, a bad body, a webhook on a streamed run,
// a busy session, an answer the checkpoint refuses) is a 200 stream ending
// in the format's terminal error, as the seed says: a client reads every
// outcome of a run in one place. Only a draining instance answers with a
// status (503 and Retry-After, before any run exists), and a background
// run, which has no stream, answers its refusals as plain JSON errors.

func (h *handlers) run() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vary(w)
		id := r.PathValue("id")
		var body runBody
		if err := decodeBody(r, &body); err != nil {
			h.badBody(w, r, id, err)
			return
		}
		async := wantsAsync(r, body.Background)
		if !h.inst.Entrypoint(id) {
			// An agent internal to a composition is not served over HTTP;
			// it answers as an unknown agent does.
			err := &core.BreadError{Code: core.CodeAgentNotFound, Message: "agent " + strconv.Quote(truncate(id, 64)) + " not found"}
			if async {
				writeError(w, http.StatusNotFound, err.Code, err.Message)
				return
			}
			h.open(w, r).fail(id, err)
			return
		}
		opts := core.RunOptions{Session: body.Session, Skill: body.Skill}
		if async {
			h.runInBackground(w, r, id, inputOrEmpty(body.Input), opts, body.Webhook)
			return
		}
		if body.Webhook != "" {
			h.open(w, r).fail(id, errWebhookNeedsBackground)
			return
		}
		h.start(w, r, id, h.inst.Run(runContext(r, body.Detach), id, inputOrEmpty(body.Input), opts), body.Detach)
	})
}

// errWebhookNeedsBackground refuses a webhook on a streamed run: nothing
// would call it.
var errWebhookNeedsBackground = &core.BreadError{Code: core.CodeValidationError, Message: "webhook needs a background run (Prefer: respond-async or \"background\": true)"}

func (h *handlers) pipeline() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vary(w)
		id := r.PathValue("id")
		var body pipelineBody
		if err := decodeBody(r, &body); err != nil {
			h.badBody(w, r, id, err)
			return
		}
		if wantsAsync(r, body.Background) {
			pd, ok := h.inst.(core.PipelineDetacher)
			if !ok {
				writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "this server does not run pipelines in the background")
				return
			}
			h.answerBackground(w, r, func() (core.Detached, error) {
				return pd.RunPipelineBackground(r.Context(), id, inputOrEmpty(body.Input), core.BackgroundOptions{Webhook: body.Webhook})
			})
			return
		}
		if body.Webhook != "" {
			h.open(w, r).fail(id, errWebhookNeedsBackground)
			return
		}
		h.start(w, r, id, h.inst.RunPipeline(runContext(r, body.Detach), id, inputOrEmpty(body.Input)), body.Detach)
	})
}

func (h *handlers) resume() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vary(w)
		id := r.PathValue("checkpointId")
		var body resumeBody
		if err := decodeBody(r, &body); err != nil {
			h.open(w, r).fail("", err)
			return
		}
		var response any
		if len(body.Response) > 0 {
			response = body.Response
		}
		h.start(w, r, "", h.inst.Resume(runContext(r, body.Detach), id, response), body.Detach)
	})
}

// RetryAfter is the Retry-After, in seconds, of a run the instance refused
// because it is stopping.
const RetryAfter = "5"

// start opens the stream once the run is admitted. A run the instance
// refuses because it is stopping (INSTANCE_STOPPING: it drains before a
// shutdown) is answered 503 with Retry-After instead, before any stream
// opens, so a client or a load balancer retries on another replica. Every
// other refusal, a busy session (SESSION_BUSY) or an answer the engine
// refused before claiming its checkpoint (VALIDATION_ERROR: nothing was
// consumed, the client may resume again) included, ends the stream.
func (h *handlers) start(w http.ResponseWriter, r *http.Request, agentID string, crumbs iter.Seq2[core.Crumb, error], detach bool) {
	// The run is ranged over on this goroutine, not pulled through
	// iter.Pull2: a coroutine per request started each run on a fresh stack
	// that grew, by copying, as deep as the run goes; the connection's
	// goroutine has grown its stack already.
	h.relay(r.Context(), func(first core.Crumb, ferr error) *response {
		if ferr != nil {
			if ae, isErr := first.(*core.AgentError); isErr && ae.Error != nil && ae.Error.Code == core.CodeInstanceStopping {
				w.Header().Set("Retry-After", RetryAfter)
				writeError(w, http.StatusServiceUnavailable, ae.Error.Code, ae.Error.Message)
				return nil
			}
		}
		if first != nil && h.g.headers != nil {
			if runID := first.Base().RunID; runID != "" {
				h.g.headers(r, runID, w.Header())
			}
		}
		return h.openBuffered(w, r)
	}, agentID, detach, crumbs)
}

// relay writes a public stream's crumbs until it ends. The stream's one
// error comes paired with its agent:error crumb and ends it as a failure.
// A write that fails means the client left: leaving the range cancels the
// run, unless it is detached: then the rest of the run is drained unwritten.
//
// open opens the stream on the first crumb (nil when there is none): it
// answers a run refused before it started with a plain error instead and
// returns nil, which ends the range and so the run.
func (h *handlers) relay(ctx context.Context, open func(first core.Crumb, err error) *response, agentID string, detach bool, crumbs iter.Seq2[core.Crumb, error]) {
	// What the loop body changes lives in one value: a range-over-func
	// body moves each outer variable it changes to the heap on its own.
	st := &relayState{}
	defer st.close()
	for c, err := range crumbs {
		if st.s == nil {
			if st.s = open(c, err); st.s == nil {
				return
			}
			st.ka = startKeepAlive(&h.kas, st.s, h.g.heartbeat)
			if c != nil {
				st.top = c.Base().RunID
			}
		}
		if st.gone {
			continue
		}
		if c == nil {
			if err != nil {
				st.ka.lock()
				st.s.fail(agentID, err)
				st.ka.unlock()
				return
			}
			continue
		}
		b := c.Base()
		f := core.Frame{RunID: b.RunID, Seq: b.Seq, Crumb: ClientSafe(c)}
		if err != nil {
			st.ka.lock()
			st.s.failure(f)
			st.ka.unlock()
			return
		}
		if b.RunID == st.top && c.CrumbType() == core.TypeAgentRunEnd {
			// The stream's own run has ended: what follows is the engine
			// storing its last log entries and releasing its session and run
			// slot. The frame goes out with the response's end, after them,
			// so a client that reads it and at once continues the session
			// or reads the run's log finds the run finished there too.
			st.ka.lock()
			ok := st.s.hold(f)
			st.ka.unlock()
			if ok {
				st.held = true
			}
			continue
		}
		st.ka.lock()
		ok := st.s.crumb(f)
		st.ka.unlock()
		if !ok {
			if detach {
				h.log.Debug("bread: stream client went away; its detached run goes on", append(baseAttrs(b), "error", context.Cause(ctx))...)
				st.gone = true
				continue
			}
			h.log.Debug("bread: stream client went away; cancelling its run", append(baseAttrs(b), "error", context.Cause(ctx))...)
			return
		}
	}
	if st.s == nil {
		if st.s = open(nil, nil); st.s == nil {
			return
		}
		st.ka = startKeepAlive(&h.kas, st.s, h.g.heartbeat)
	}
	st.ka.stop()
	st.ka = nil // stopped: it may already serve another stream
	switch {
	case st.gone:
	case st.held:
		st.s.end()
	case len(st.s.buf) > 0:
		st.s.flush() // a stream that ended without a frame still opens
	}
}

// relayState is relay's progress through a stream.
type relayState struct {
	s    *response
	ka   *keepAlive
	top  string // the run the stream was opened for
	gone bool   // the client left a detached run
	held bool   // the stream's own agent:run:end waits for the response's end
}

// close stops the keep-alive, if still ticking, and gives the frame buffer
// back.
func (st *relayState) close() {
	if st.ka != nil {
		st.ka.stop()
	}
	if st.s != nil {
		st.s.release()
	}
}
