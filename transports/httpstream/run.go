package httpstream

import (
	"context"
	"iter"
	"net/http"

	"github.com/breadai/bread/core"
)

// The run-starting routes pass the request's context to the Instance: a
// client that disconnects cancels its run, which ends with RUN_CANCELLED in
// the crumb log.

func (h *handlers) run() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vary(w)
		id := r.PathValue("id")
		var body runBody
		err := decodeBody(r, &body)
		s := h.open(w, r)
		if err != nil {
			s.fail(id, err)
			return
		}
		opts := core.RunOptions{Session: body.Session, Skill: body.Skill}
		h.relay(r.Context(), s, id, h.inst.Run(r.Context(), id, inputOrEmpty(body.Input), opts))
	})
}

func (h *handlers) pipeline() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vary(w)
		id := r.PathValue("id")
		var body pipelineBody
		err := decodeBody(r, &body)
		s := h.open(w, r)
		if err != nil {
			s.fail(id, err)
			return
		}
		h.relay(r.Context(), s, id, h.inst.RunPipeline(r.Context(), id, inputOrEmpty(body.Input)))
	})
}

func (h *handlers) resume() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vary(w)
		id := r.PathValue("checkpointId")
		var body resumeBody
		err := decodeBody(r, &body)
		s := h.open(w, r)
		if err != nil {
			s.fail("", err)
			return
		}
		var response any
		if len(body.Response) > 0 {
			response = body.Response
		}
		h.relay(r.Context(), s, "", h.inst.Resume(r.Context(), id, response))
	})
}

// relay writes a public stream's crumbs until it ends. The stream's one
// error comes paired with its agent:error crumb and ends it as a failure.
// A write that fails means the client left: leaving the range cancels the
// run.
func (h *handlers) relay(ctx context.Context, s *response, agentID string, crumbs iter.Seq2[core.Crumb, error]) {
	for c, err := range crumbs {
		if c == nil {
			if err != nil {
				s.fail(agentID, err)
				return
			}
			continue
		}
		b := c.Base()
		f := core.Frame{RunID: b.RunID, Seq: b.Seq, Crumb: ClientSafe(c)}
		if err != nil {
			s.failure(f)
			return
		}
		if !s.crumb(f) {
			h.log.Debug("bread: stream client went away; cancelling its run", "runId", b.RunID, "error", context.Cause(ctx))
			return
		}
	}
}
