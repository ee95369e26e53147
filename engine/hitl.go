package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// resume claims a checkpoint, answers its pending call and continues the run
// from the store, then whatever composition was waiting on it.
func (in *Instance) resume(ctx context.Context, out sink, checkpointID string, response any) (outcome, error) {
	cp, err := in.store.GetCheckpoint(ctx, checkpointID)
	if err != nil {
		return outcome{}, checkpointMissing(err, checkpointID)
	}
	if len(cp.Pending) > 0 {
		children := make([]string, len(cp.Pending))
		for i, p := range cp.Pending {
			children[i] = p.ChildCheckpointID
		}
		return outcome{}, &core.BreadError{
			Code: core.CodeSupervisorNotResumable,
			Message: "checkpoint " + checkpointID + " belongs to supervisor " + cp.AgentID + ", which waits on suspended delegations; resume the delegated runs instead: " +
				strings.Join(children, ", "),
			Context: map[string]any{"checkpointId": checkpointID, "agentId": cp.AgentID, "childCheckpointIds": children},
		}
	}
	rt, ok := in.agents[cp.AgentID]
	if !ok {
		return outcome{}, core.Errorf(core.CodeAgentNotFound, "agent %s of checkpoint %s is not registered", cp.AgentID, checkpointID)
	}
	// A malformed answer is refused before the claim, so the checkpoint
	// stays resumable with a valid one.
	if err := rt.checkResponse(cp, response); err != nil {
		return outcome{}, err
	}
	// Claim before anything observable: a concurrent resume of the same
	// checkpoint loses here instead of executing a tool or answering twice.
	// The checkpoint stays until the continuation is recorded, so a process
	// that dies mid-resume loses no approval: its claim lapses (the keeper
	// stops renewing it) and the resume can be retried.
	claimedAt := in.nowMillis()
	if err := in.records.claim(ctx, checkpointID); err != nil {
		return outcome{}, checkpointMissing(err, checkpointID)
	}
	done, held := in.records.continued(ctx, cp)
	if done {
		// A resume whose process died after recording the continuation,
		// before removing the checkpoint: the answer was given once.
		in.records.settle(ctx, cp, nil)
		return outcome{}, checkpointMissing(core.ErrCheckpointNotFound, checkpointID)
	}

	opts := core.RunOptions{Skill: cp.Skill}
	if cp.Parent == nil {
		// The client's input is the top-level run's: a delegated run or a
		// pipeline step resumed here never gets the client's tools or state.
		opts.Client = resumeClientFrom(ctx)
	}
	r := in.newRun(rt, cp.RunID, cp.SessionID, response, opts)
	r.parent = cp.Parent
	r.resumedFrom, r.heldSince = &cp, claimedAt
	r.heldFence = held
	if cp.Set != nil && held != nil {
		// The answers to one turn's several questions resume the run at
		// once, each under its own checkpoint's claim: they share the
		// run's token, so none refuses the others' writes. A sweeper's
		// loss still changes it for all of them.
		r.fence = *held
	}
	r.restoreUsage(cp.Meta)
	// The run, and a pipeline it is a step of, go on at the depth they
	// suspended at; a supervisor waiting on it restores its own.
	ctx = in.delegationFromMeta(ctx, cp.Meta)
	runOut := sink(out)
	if cp.Parent != nil {
		// The composition, not this run, decides how the stream ends.
		runOut = nested{out}
	}
	res, err := func() (outcome, error) {
		ctx, done := r.bind(core.WithCheckpointMeta(ctx, cp.Meta), runOut)
		defer done()
		if r.lostAtTake {
			// Another resume of the checkpoint took the run while this
			// one was paused after its claim: nothing of this one runs.
			return outcome{}, r.fail(ctx, errLeaseLost)
		}
		if err := r.applyClientState(ctx); err != nil {
			return outcome{}, r.fail(ctx, err)
		}
		return r.answer(ctx, cp, response)
	}()
	if err != nil {
		return res, err
	}
	if res.suspended {
		return res, nil
	}
	if cp.Parent == nil {
		return res, nil
	}
	return in.continueParent(ctx, out, cp.Parent, res.output)
}

func checkpointMissing(err error, id string) error {
	if isCode(err, core.CodeCheckpointNotFound) {
		return &core.BreadError{Code: core.CodeCheckpointNotFound, Message: "checkpoint " + quoteTruncated(id) + " not found or already resumed", Context: map[string]any{"checkpointId": id}}
	}
	return err
}

// answer resumes a claimed checkpoint's run: human:resumed, the answer to
// the pending call (for an approval, the gated tool runs or is rejected
// through the same hook path as a live call), then the model loop.
func (r *run) answer(ctx context.Context, cp core.CheckpointRecord, response any) (outcome, error) {
	kind := cp.Kind
	if kind == "" {
		kind = core.HumanApproval
		for _, h := range r.agent.HumanTools {
			if core.LeafName(core.ToolOrigin{Scope: core.ScopeHuman, Name: h.Name}) == cp.ToolName {
				kind = core.HumanInput
			}
		}
	}
	if !r.emit(&core.HumanResumed{CrumbBase: r.base(), CheckpointID: cp.ID, Response: response, Kind: kind}) {
		return outcome{}, r.fail(ctx, errConsumerGone)
	}
	call := toolCall{ID: cp.ToolCallID, Name: cp.ToolName, Input: cp.Schema, idempotencyKey: cp.ID + ":" + cp.ToolCallID}
	if r.in.answered(ctx, r.sessionID, cp.ToolCallID) {
		// An earlier attempt at this resume recorded the answer before its
		// process died: the approved tool finished, so it does not run
		// again, and the model continues from that answer; if it had
		// recorded the model's last reply too, the run ends with it.
		if reply, ok := r.in.recordedReply(ctx, r.sessionID, cp.ToolCallID); ok {
			out, err := r.parseOutput(reply)
			if err != nil {
				return outcome{}, r.fail(ctx, err)
			}
			r.closeLoop(ctx, false)
			return r.finish(ctx, out)
		}
		return r.afterAnswer(ctx, cp)
	}
	var part core.Part
	switch {
	case kind == core.HumanInput && !r.agent.isHumanTool(cp.ToolName) && !isClientToolCall(cp):
		// A tool that asked mid-call (core.ToolQuestion) runs again with
		// the answer.
		p, res, err := r.answerQuestion(ctx, cp, call, response)
		if err != nil || p == nil {
			return res, err
		}
		part = *p
	case kind == core.HumanInput:
		raw, err := core.AsJSON(response)
		if err != nil {
			return outcome{}, r.fail(ctx, core.Errorf(core.CodeValidationError, "the response is not JSON: %w", err))
		}
		part = core.Part{Type: core.PartToolResult, ToolCallID: cp.ToolCallID, ToolName: cp.ToolName, Output: raw}
	case approved(response):
		ts, err := r.assembleTools(ctx)
		if err != nil {
			return outcome{}, r.fail(ctx, err)
		}
		bt := ts.byLeaf[cp.ToolName]
		if bt == nil || bt.tool == nil {
			return outcome{}, r.fail(ctx, core.Errorf(core.CodeToolNotFound, "the approved tool %s is no longer available on agent %s", cp.ToolName, r.agent.ID))
		}
		o := r.invokeTool(ctx, bt, call, func(c core.Crumb) { r.emit(c) })
		if o.question != nil {
			// The approved tool asks a human in turn.
			p, res, err := r.askAgain(ctx, cp, ts, bt, call, o.question)
			if err != nil || p == nil {
				return res, err
			}
			o.part = *p
		}
		part = o.part
	default:
		part = resultPart(call, map[string]any{"denied": true, "reason": "rejected by human"})
	}
	if cause := r.cancelCause(ctx); cause != nil {
		// A resume cut short (the instance stopping, the client gone) must
		// not record a half answer: the checkpoint is resumed again, and
		// the call with it.
		return outcome{}, r.fail(ctx, cause)
	}
	if err := r.persist(ctx, core.Message{Role: core.RoleTool, Parts: []core.Part{part}}); err != nil {
		return outcome{}, r.fail(ctx, err)
	}
	return r.afterAnswer(ctx, cp)
}

// afterAnswer carries a resumed run on once its answer is recorded: at once
// for a lone checkpoint. A checkpoint of a set settles its slot of the set's
// join; only the answer that settles the last slot continues the run (the
// store decides it once, whatever resumes run concurrently), and every other
// answer ends its resume with the run still suspended on its siblings.
//
// The run's record says suspended before the slot is settled: once it is,
// the last sibling may already be running the continuation, whose record
// must not be overwritten.
func (r *run) afterAnswer(ctx context.Context, cp core.CheckpointRecord) (outcome, error) {
	set := cp.Set
	if set == nil {
		return r.continueRun(ctx)
	}
	siblings := r.in.pendingSiblings(ctx, set, cp.ID)
	waiting := outcome{suspended: true}
	if len(siblings) > 0 {
		waiting.checkpointID = siblings[0].ID
	}
	r.in.records.ended(ctx, r.record(), waiting, nil)
	_, complete, err := r.in.store.SettleJoin(ctx, set.ID, len(set.CheckpointIDs), set.Slot(cp.ID), json.RawMessage(`null`))
	if err != nil {
		return outcome{}, r.fail(ctx, err)
	}
	if !complete {
		// This checkpoint is answered: remove it. The run's record stays as
		// written above, and the stream ends as a suspension does, with
		// what the run still waits on.
		r.recorded, r.resumedFrom = true, nil
		r.in.records.settle(ctx, cp, nil)
		ids := make([]string, len(siblings))
		for i, s := range siblings {
			ids[i] = s.ID
		}
		for _, s := range siblings {
			r.emit(&core.HumanRequired{CrumbBase: r.base(), CheckpointID: s.ID, ToolName: s.ToolName, ToolCallID: s.ToolCallID, Schema: s.Schema, Prompt: s.Prompt, Kind: s.Kind, Set: ids})
		}
		return waiting, nil
	}
	r.in.records.running(ctx, r.record())
	return r.continueRun(ctx)
}

// pendingSiblings returns the checkpoints of set, other than answered, that
// still wait for their answers, in call order.
func (in *Instance) pendingSiblings(ctx context.Context, set *core.HumanSet, answered string) []core.CheckpointRecord {
	var out []core.CheckpointRecord
	for _, id := range set.CheckpointIDs {
		if id == answered {
			continue
		}
		if cp, err := in.store.GetCheckpoint(ctx, id); err == nil {
			out = append(out, cp)
		}
	}
	return out
}

// answered reports whether the session already holds the result of the
// tool call toolCallID, recorded after the model made the call.
func (in *Instance) answered(ctx context.Context, sessionID, toolCallID string) bool {
	msgs, err := in.store.GetMessages(ctx, sessionID)
	if err != nil {
		return false
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		var m core.Message
		if json.Unmarshal(msgs[i].Content, &m) != nil {
			return false
		}
		for _, p := range m.Parts {
			switch {
			case p.ToolCallID != toolCallID:
			case p.Type == core.PartToolResult:
				return true
			case p.Type == core.PartToolCall:
				return false // back at the call: nothing answered it
			}
		}
	}
	return false
}

// recordedReply returns the text the model answered with after the answer
// to toolCallID, when the session shows that continuation finished: its
// last message is the assistant's, calling no tool.
func (in *Instance) recordedReply(ctx context.Context, sessionID, toolCallID string) (string, bool) {
	msgs, err := in.store.GetMessages(ctx, sessionID)
	if err != nil {
		return "", false
	}
	var text strings.Builder
	after, final := false, false
	for _, sm := range msgs {
		var m core.Message
		if json.Unmarshal(sm.Content, &m) != nil {
			return "", false
		}
		if !after {
			after = slices.ContainsFunc(m.Parts, func(p core.Part) bool {
				return p.Type == core.PartToolResult && p.ToolCallID == toolCallID
			})
			continue
		}
		final = m.Role == core.RoleAssistant && !slices.ContainsFunc(m.Parts, func(p core.Part) bool { return p.Type == core.PartToolCall })
		if m.Role == core.RoleAssistant {
			for _, p := range m.Parts {
				if p.Type == core.PartText {
					text.WriteString(p.Text)
				}
			}
		}
	}
	return text.String(), final
}

// checkResponse validates a human's response before a resume consumes the
// checkpoint: an approval must be {"approved": bool, "reason"?: string}
// (a bare "yes" or {} used to count silently as a refusal), and a human
// tool's answer must match the tool's answer schema.
func (rt *agentRT) checkResponse(cp core.CheckpointRecord, response any) error {
	if cp.Kind == core.HumanInput || (cp.Kind == "" && rt.answers[cp.ToolName] != nil) {
		if cs := rt.answers[cp.ToolName]; cs != nil {
			return cs.validate("the answer to "+cp.ToolName, response)
		}
		return nil
	}
	raw, err := core.AsJSON(response)
	if err != nil {
		return &core.BreadError{Code: core.CodeValidationError, Message: "an approval is not JSON: " + err.Error()}
	}
	var v struct {
		Approved *bool   `json:"approved"`
		Reason   *string `json:"reason"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(&v)
	if err == nil {
		// One value and nothing after it: `{"approved":false}0` is not an approval.
		if _, next := dec.Token(); next != io.EOF {
			err = errors.New("trailing data after the approval")
		}
	}
	if err != nil || v.Approved == nil {
		return &core.BreadError{
			Code:    core.CodeValidationError,
			Message: `an approval must be {"approved": true|false, "reason"?: "..."}`,
			Context: map[string]any{"checkpointId": cp.ID, "toolName": cp.ToolName},
		}
	}
	return nil
}

// approved reads {"approved": true} from a response of any shape.
func approved(response any) bool {
	raw, err := core.AsJSON(response)
	if err != nil {
		return false
	}
	var v struct {
		Approved bool `json:"approved"`
	}
	return json.Unmarshal(raw, &v) == nil && v.Approved
}
