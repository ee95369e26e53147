package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// asking says how a call's client can answer a run that waits for a human.
type asking int

const (
	// askNot: the client cannot be asked (no elicitation capability, or a
	// 2025-11-25 request without a session, which cannot carry a request
	// to the client); the call answers the suspended result.
	askNot asking = iota
	// askInline: elicitation/create within the call, on a session that
	// can carry it (stdio, or a stateful Streamable HTTP session).
	askInline
	// askRoundTrip: an input_required result naming the checkpoint in its
	// requestState, answered by the client retrying the call with its
	// inputResponses (2026-07-28, SEP-2322): sessionless, so the retry may
	// reach any replica on the same store.
	askRoundTrip
)

// roundTripVersion is the first revision with multi-round-trip requests.
const roundTripVersion = "2026-07-28"

func askingOf(req *mcp.CallToolRequest) asking {
	if req == nil || req.Session == nil {
		return askNot
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return askNot
	}
	if e := ip.Capabilities.Elicitation; e.Form == nil && e.URL != nil {
		return askNot // URL mode only: bread asks with forms
	}
	if ip.ProtocolVersion >= roundTripVersion {
		return askRoundTrip
	}
	if req.Extra != nil && req.Extra.Header != nil && req.Extra.Header.Get(statelessHeader) != "" {
		return askNot
	}
	return askInline
}

// roundState is the requestState of an input_required result: the
// checkpoint asked, the top run of the call and the MCP tool. The client
// echoes it; it is not trusted: the checkpoint is read back from the store
// under the session ownership rule, as POST /resume reads it.
type roundState struct {
	V          int    `json:"v"`
	Checkpoint string `json:"cp,omitempty"`
	// Parked names a run waiting in this process for the host's sampling
	// message (hostturns.go) instead of a checkpoint.
	Parked string `json:"parked,omitempty"`
	Run    string `json:"run"`
	Tool   string `json:"tool"`
}

func (s roundState) encode() string {
	b, _ := json.Marshal(s)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeRoundState(s string) (roundState, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return roundState{}, false
	}
	var st roundState
	if json.Unmarshal(b, &st) != nil || st.V != 1 || (st.Checkpoint == "") == (st.Parked == "") || st.Run == "" {
		return roundState{}, false
	}
	return st, true
}

// outcome is what a run's stream came to.
type outcome struct {
	end       *core.AgentRunEnd
	suspended *core.HumanRequired
	failure   error
}

// drain reads a run's stream to its end: the top run's agent:run:end, the
// first human:required (a set's others are asked again after it is
// answered) and the top run's agent:error. top is learned from the first
// crumb when empty.
func drain(seq iter.Seq2[core.Crumb, error], top *string, notify func(core.Crumb)) outcome {
	var o outcome
	for c, err := range seq {
		o.add(c, err, top, notify)
	}
	return o
}

// add takes one step of drain.
func (o *outcome) add(c core.Crumb, err error, top *string, notify func(core.Crumb)) {
	if err != nil {
		o.failure = err
	}
	if c == nil {
		return
	}
	if *top == "" {
		*top = c.Base().RunID
	}
	notify(c)
	switch v := c.(type) {
	case *core.AgentRunEnd:
		if v.RunID == *top {
			o.end = v
		}
	case *core.HumanRequired:
		if o.suspended == nil {
			o.suspended = v
		}
	case *core.AgentError:
		if o.failure == nil && v.RunID == *top {
			o.failure = v.Error
		}
	}
}

// runAgent runs an agent to its end, turning crumbs into progress
// notifications when the client sent a progress token. A run that waits
// for a human asks the client through elicitation when it can, and goes
// on with the answer in the same call. A 2026-07-28 run whose model asks
// the host (mcp-sampling) parks until the client's retry brings the
// host's message (hostturns.go).
func (p *Plugin) runAgent(ctx context.Context, req *mcp.CallToolRequest, agentID string, input any, opts core.RunOptions, outWrapped bool) *mcp.CallToolResult {
	notify := progress(ctx, req)
	mode := askingOf(req)
	var (
		top string
		c   *course
	)
	if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
		var res *mcp.CallToolResult
		c, top, res = p.retried(ctx, req, agentID)
		if res != nil {
			return res
		}
	} else {
		c = newCourse(ctx, req)
		c.follow(p.rt.Run(c.ctx, agentID, input, opts))
	}
	parkedRun := false
	defer func() {
		if !parkedRun {
			c.cancel()
		}
	}()
	for {
		o, turn := c.drain(ctx, &top, notify)
		if turn != nil {
			parkedRun = true
			return p.park(ctx, req, c, turn, top)
		}
		switch {
		case o.suspended != nil:
		case o.failure != nil:
			return errorResult(o.failure)
		case o.end == nil:
			return errorResult(core.Errorf(core.CodeAgentError, "the run of %s ended without an output", agentID))
		default:
			res := valueResult(o.end.Output, outWrapped)
			for _, f := range o.end.Files {
				res.Content = append(res.Content, p.fileLink(o.end.RunID, f))
			}
			if sid := o.end.SessionID; sid != "" && !res.IsError {
				// The run's session, readable (and subscribable) as a
				// resource.
				res.Content = append(res.Content, &mcp.ResourceLink{URI: transcriptURI(sid), Name: "transcript", Title: "The run's session transcript", MIMEType: "application/json"})
			}
			return res
		}
		h := o.suspended
		if mode == askNot {
			return suspendedResult(agentID, h)
		}
		q, err := p.ask(h)
		if err != nil {
			p.log.Info("bread: mcpserver cannot ask this checkpoint through elicitation; the run stays suspended", "checkpointId", h.CheckpointID, "reason", err.Error())
			return suspendedResult(agentID, h)
		}
		if mode == askRoundTrip {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{h.CheckpointID: q.params},
				RequestState:  roundState{V: 1, Checkpoint: h.CheckpointID, Run: top, Tool: req.Params.Name}.encode(),
			}
		}
		reply, err := req.Session.Elicit(ctx, q.params)
		if err != nil {
			if ctx.Err() != nil {
				// The client gave up on the call while its user was
				// asked: the run ends with it.
				return p.cancelWaiting(ctx, agentID, h, "the MCP client cancelled the call")
			}
			p.log.Info("bread: mcpserver elicitation failed; the run stays suspended", "checkpointId", h.CheckpointID, "reason", err.Error())
			return suspendedResult(agentID, h)
		}
		seq, res := p.answer(c.ctx, agentID, q, h, reply)
		if res != nil {
			return res
		}
		c.follow(seq)
	}
}

// answer resumes a checkpoint with the client's reply to its elicitation:
// accept resumes with the mapped answer, decline answers an approval as
// denied, and cancel (or the decline of an input, which has no "no"
// answer) cancels the suspended run. A result is returned when the run
// does not go on.
func (p *Plugin) answer(ctx context.Context, agentID string, q question, h *core.HumanRequired, reply *mcp.ElicitResult) (iter.Seq2[core.Crumb, error], *mcp.CallToolResult) {
	switch {
	case reply.Action == "accept":
		return p.rt.Resume(ctx, h.CheckpointID, q.response(reply.Content)), nil
	case reply.Action == "decline" && q.approval:
		return p.rt.Resume(ctx, h.CheckpointID, declined()), nil
	case reply.Action == "decline":
		return nil, p.cancelWaiting(ctx, agentID, h, "the user of the MCP client declined to answer")
	}
	return nil, p.cancelWaiting(ctx, agentID, h, "the user of the MCP client cancelled the question")
}

// cancelWaiting cancels a run that waits for a human (when the runtime can:
// engine.Instance.CancelSuspended) and answers RUN_CANCELLED; a run it
// cannot cancel stays suspended and the call answers so.
func (p *Plugin) cancelWaiting(ctx context.Context, agentID string, h *core.HumanRequired, why string) *mcp.CallToolResult {
	c, ok := p.rt.(interface {
		CancelSuspended(ctx context.Context, runID string) (bool, error)
	})
	if !ok {
		return suspendedResult(agentID, h)
	}
	found, err := c.CancelSuspended(context.WithoutCancel(ctx), h.RunID)
	if err != nil || !found {
		if err != nil {
			p.log.Info("bread: mcpserver could not cancel a suspended run", "runId", h.RunID, "reason", err.Error())
		}
		return suspendedResult(agentID, h)
	}
	res := errorResult(&core.BreadError{Code: core.CodeRunCancelled, Message: "the run " + h.RunID + " of agent " + agentID + " was cancelled: " + why})
	res.Meta = mcp.Meta{"bread/runId": h.RunID, "bread/checkpointId": h.CheckpointID}
	return res
}

// retried continues a call the client retried with the answer to an
// input_required result: the checkpoint its requestState names is read
// back from the store (the ownership rule applies: another identity's
// checkpoint is not found), asked the same question, and answered; or the
// run it names, parked on a host turn, gets the host's message.
func (p *Plugin) retried(ctx context.Context, req *mcp.CallToolRequest, agentID string) (*course, string, *mcp.CallToolResult) {
	st, ok := decodeRoundState(req.Params.RequestState)
	if !ok || st.Tool != req.Params.Name {
		return nil, "", errorResult(core.Errorf(core.CodeValidationError, "the requestState of this retry is not one this server issued for %s", req.Params.Name))
	}
	if st.Parked != "" {
		return p.unpark(ctx, req, st)
	}
	reply, ok := req.Params.InputResponses[st.Checkpoint].(*mcp.ElicitResult)
	if !ok {
		return nil, "", errorResult(core.Errorf(core.CodeValidationError, "the retry carries no elicitation result for checkpoint %s", st.Checkpoint))
	}
	cp, err := p.rt.Storage().GetCheckpoint(ctx, st.Checkpoint)
	if err != nil {
		return nil, "", errorResult(err)
	}
	h := &core.HumanRequired{CrumbBase: core.CrumbBase{AgentID: cp.AgentID, RunID: cp.RunID, SessionID: cp.SessionID}, CheckpointID: cp.ID, ToolName: cp.ToolName, Schema: cp.Schema, Prompt: cp.Prompt, Kind: cp.Kind}
	q, err := p.ask(h)
	if err != nil {
		return nil, "", suspendedResult(agentID, h)
	}
	c := newCourse(ctx, req)
	seq, res := p.answer(c.ctx, agentID, q, h, reply)
	if res != nil {
		c.cancel()
		return nil, "", res
	}
	c.follow(seq)
	return c, st.Run, nil
}
