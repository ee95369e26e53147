package server

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/breadai/bread/core"
)

// Actions of the routes the server defines beyond core's list.
const (
	// ActionPipelineList is GET /pipelines.
	ActionPipelineList = "pipeline.list"
	// ActionAgentEval is POST /agents/{id}/evals: it runs the agent.
	ActionAgentEval = "agent.eval"
	// ActionEvalList is GET /agents/{id}/evals: an agent's eval history.
	ActionEvalList = "eval.list"
	// ActionEvalRead is GET /agents/{id}/evals/{evalId}: one past eval
	// run with its cases.
	ActionEvalRead = "eval.read"
	// ActionConsoleRead is the web console's page and assets (GET / and
	// GET /console/{file}), served with Options.Console.
	ActionConsoleRead = "console.read"
)

// CodeEvalsNotFound answers POST /agents/{id}/evals for an agent with no
// eval suite.
const CodeEvalsNotFound = "EVALS_NOT_FOUND"

// evalPageLimit is GET /agents/{id}/evals's page size without ?limit, and
// maxEvalPageLimit the largest ?limit.
const (
	evalPageLimit    = 100
	maxEvalPageLimit = 1000
)

// evalReport is POST /agents/{id}/evals's answer: the run as the store
// keeps it (ID empty when it keeps none).
type evalReport struct {
	ID string `json:"id,omitempty"`
	core.EvalRun
	Results []core.EvalResult `json:"results"`
}

// evalPage is GET /agents/{id}/evals's answer: a page of the history,
// newest first, and the cursor of the next page when there may be one.
type evalPage struct {
	AgentID string         `json:"agentId"`
	Evals   []core.EvalRun `json:"evals"`
	Next    string         `json:"next,omitempty"`
}

// evalAgent answers 404 for an id that is not an entrypoint agent.
func (s *Server) evalAgent(w http.ResponseWriter, id string) bool {
	if _, ok := s.inst.Agent(id); !ok || !s.inst.Entrypoint(id) {
		writeError(w, http.StatusNotFound, core.CodeAgentNotFound, "agent "+quote(id)+" not found")
		return false
	}
	return true
}

// runEvals serves POST /agents/{id}/evals: it runs the agent's suites and,
// when the store keeps an eval history (core.StoreEvalRuns), saves the run
// there, under the caller's identity, before answering with its id. A run
// the store fails to save is still answered, without an id, and the
// failure logged: the cases ran, and losing their results would cost
// running them again.
func (s *Server) runEvals(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.evalAgent(w, id) {
		return
	}
	if s.opts.Evals == nil {
		writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "this server runs no evals")
		return
	}
	start := time.Now()
	results, err := s.opts.Evals(r.Context(), id)
	var be *core.BreadError
	switch {
	case errors.As(err, &be) && be.Code == CodeEvalsNotFound:
		writeError(w, http.StatusNotFound, CodeEvalsNotFound, be.Message)
		return
	case err != nil:
		writeFailure(w, r, s.log, err)
		return
	}
	run := core.NewEvalRun(uuid.NewString(), id, start, nonNil(results))
	rep := evalReport{EvalRun: run, Results: run.Results}
	if st := s.inst.Storage(); st.Has(core.StoreEvalRuns) {
		if err := st.SaveEvalRun(r.Context(), run); err != nil {
			s.log.ErrorContext(r.Context(), "bread: saving an eval run failed; answering its results without an id", "agentId", id, "error", err)
		} else {
			rep.ID = run.ID
		}
	}
	rep.StartedBy = "" // an owner key is the operator's business
	writeJSON(w, http.StatusOK, rep)
}

// evalRuns returns the store, which keeps an eval history, or answers 501.
func (s *Server) evalRuns(w http.ResponseWriter) (*core.Storage, bool) {
	st := s.inst.Storage()
	if !st.Has(core.StoreEvalRuns) {
		writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "the configured store keeps no eval history")
		return nil, false
	}
	return st, true
}

// listEvals serves GET /agents/{id}/evals: the agent's past eval runs,
// newest first, without their cases, ?limit (1–1000, default 100) at a
// time, ?after the previous page's next. Under the session ownership
// rule a caller sees its own runs only (core.Storage.ListEvalRuns).
func (s *Server) listEvals(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.evalAgent(w, id) {
		return
	}
	st, ok := s.evalRuns(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := core.EvalRunFilter{AgentID: id, Limit: evalPageLimit}
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxEvalPageLimit || raw[0] == '+' {
			badRequest(w, "invalid limit "+quote(raw)+": expected an integer from 1 to "+strconv.Itoa(maxEvalPageLimit))
			return
		}
		f.Limit = n
	}
	if raw := q.Get("after"); raw != "" {
		c, err := decodeEvalCursor(raw)
		if err != nil {
			badRequest(w, "invalid after "+quote(raw)+": expected the next of a previous page")
			return
		}
		f.After = c
	}
	// One more than the page tells whether a next page exists.
	want := f.Limit
	f.Limit++
	runs, err := st.ListEvalRuns(r.Context(), f)
	if err != nil {
		writeFailure(w, r, s.log, err)
		return
	}
	page := evalPage{AgentID: id, Evals: nonNil(runs)}
	if len(runs) > want {
		page.Evals = runs[:want]
		page.Next = encodeEvalCursor(core.EvalCursorOf(page.Evals[want-1]))
	}
	for i := range page.Evals {
		page.Evals[i].StartedBy = ""
	}
	writeJSON(w, http.StatusOK, page)
}

// readEval serves GET /agents/{id}/evals/{evalId}: one past run with its
// cases. Another agent's run, and under the ownership rule another
// identity's, is 404 EVAL_RUN_NOT_FOUND like a missing one.
func (s *Server) readEval(w http.ResponseWriter, r *http.Request) {
	id, evalID := r.PathValue("id"), r.PathValue("evalId")
	if !s.evalAgent(w, id) {
		return
	}
	st, ok := s.evalRuns(w)
	if !ok {
		return
	}
	run, err := st.GetEvalRun(r.Context(), evalID)
	if err == nil && run.AgentID != id {
		err = core.ErrEvalRunNotFound
	}
	switch {
	case errors.Is(err, core.ErrEvalRunNotFound):
		writeError(w, http.StatusNotFound, core.CodeEvalRunNotFound, "eval run "+quote(evalID)+" of agent "+quote(id)+" not found")
		return
	case err != nil:
		writeFailure(w, r, s.log, err)
		return
	}
	run.StartedBy = ""
	writeJSON(w, http.StatusOK, evalReport{ID: run.ID, EvalRun: run, Results: nonNil(run.Results)})
}

// encodeEvalCursor and decodeEvalCursor make a page's position an opaque
// token: base64url of its JSON.
func encodeEvalCursor(c *core.EvalRunCursor) string {
	b, _ := json.Marshal(c) // two plain fields: never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeEvalCursor(raw string) (*core.EvalRunCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, err
	}
	var c core.EvalRunCursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if c.ID == "" {
		return nil, errors.New("a cursor without an id")
	}
	return &c, nil
}
