package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/typed"
)

// supervisorSummary is the roster section of a supervisor's prompt.
func supervisorSummary(cfg *core.SupervisorConfig) string {
	roster := make([]string, len(cfg.Agents))
	for i, sa := range cfg.Agents {
		roster[i] = sa.AgentID
		if sa.Max > 0 {
			roster[i] += " (max " + strconv.Itoa(sa.Max) + " concurrent)"
		}
	}
	lines := []string{
		"## Delegation",
		"You can delegate work to these sub-agents: " + strings.Join(roster, ", ") + ".",
		"Call `core_delegate` with `agentId` and `input`; the sub-agent runs and its output is returned to you as the tool result. " +
			"Delegate in parallel by making several `core_delegate` calls in one turn, or in series by delegating, reading the result, then delegating again.",
	}
	if cfg.Max > 0 {
		lines = append(lines, "At most "+strconv.Itoa(cfg.Max)+" delegations run concurrently overall.")
	}
	return strings.Join(lines, "\n")
}

// supervisorRuntime is a supervisor run's delegation state: the caps in
// flight and the human:required crumbs of delegations that suspended, held
// back until the supervisor's own checkpoint links them.
type supervisorRuntime struct {
	r   *run
	cfg *core.SupervisorConfig

	mu       sync.Mutex
	active   int
	perAgent map[string]int
	held     []core.Crumb
}

func newSupervisorRuntime(r *run, cfg *core.SupervisorConfig) *supervisorRuntime {
	return &supervisorRuntime{r: r, cfg: cfg, perAgent: map[string]int{}}
}

type delegateArgs struct {
	AgentID string          `json:"agentId" validate:"required" jsonschema:"description=Id of the configured sub-agent to delegate to"`
	Input   json.RawMessage `json:"input" jsonschema:"description=The input to run the sub-agent with"`
}

const delegateToolName = "core_delegate"

func (s *supervisorRuntime) delegateTool() core.Tool {
	return typed.DefineTool("delegate", "Delegate a piece of work to one of your configured sub-agents. The sub-agent runs with `input` and its output is returned as this tool result.",
		func(ctx context.Context, a delegateArgs, tc core.ToolContext) (any, error) {
			return s.delegate(ctx, a, tc)
		})
}

func (s *supervisorRuntime) roster() []string {
	ids := make([]string, len(s.cfg.Agents))
	for i, sa := range s.cfg.Agents {
		ids[i] = sa.AgentID
	}
	return ids
}

// delegate runs one sub-agent as a nested run whose crumbs surface according
// to its visibility. If it suspends for a human, the delegation fails with
// DELEGATION_SUSPENDED, which the supervisor's model loop turns into a chain
// suspension instead of a tool error.
func (s *supervisorRuntime) delegate(ctx context.Context, a delegateArgs, tc core.ToolContext) (any, error) {
	parentID := s.r.agent.ID
	var sa *core.SubAgent
	for i := range s.cfg.Agents {
		if s.cfg.Agents[i].AgentID == a.AgentID {
			sa = &s.cfg.Agents[i]
		}
	}
	if sa == nil {
		return nil, &core.BreadError{
			Code:    core.CodeDelegateNotConfigured,
			Message: quoteTruncated(a.AgentID) + " is not in this supervisor's roster; configured sub-agents: " + strings.Join(s.roster(), ", "),
			Context: map[string]any{"agentId": parentID, "subAgentId": a.AgentID, "roster": s.roster()},
		}
	}
	ctx, err := s.r.in.delegating(ctx, parentID, a.AgentID)
	if err != nil {
		return nil, err
	}
	if err := s.acquire(sa); err != nil {
		return nil, err
	}
	defer s.release(sa.AgentID)

	vis := sa.Visibility
	if vis == "" {
		vis = core.Passthrough
	}
	var suspendedAt string
	emit := builtinEmit(tc)
	out := delegatedSink{forward: builtinForward(tc), folded: &shownEnd{}}
	if vis != core.Passthrough {
		out.show = func(c core.Crumb) core.Crumb { return filterSubAgentCrumb(c, a.AgentID, parentID, vis) }
	}
	out.funcSink = func(c core.Crumb) {
		if hr, ok := c.(*core.HumanRequired); ok {
			// Held until the supervisor's checkpoint links this child, so a
			// client resuming the instant it sees the crumb finds the link.
			suspendedAt = hr.CheckpointID
			s.mu.Lock()
			s.held = append(s.held, c)
			s.mu.Unlock()
			return
		}
		if f := out.shown(c); f != nil {
			emit(f)
		}
	}
	var input any = a.Input
	if len(a.Input) == 0 {
		input = nil
	}
	res, err := s.r.in.runAgent(ctx, nested{out}, a.AgentID, input, core.RunOptions{}, nil)
	if err != nil {
		return nil, err
	}
	if res.suspended {
		// Link the delegated run's own checkpoint: when it is itself a
		// supervisor waiting on a deeper child, the human's crumb names the
		// grandchild, which already links to it.
		if res.checkpointID != "" {
			suspendedAt = res.checkpointID
		}
		return nil, &core.BreadError{
			Code:    core.CodeDelegationSuspended,
			Message: "the delegated run of " + a.AgentID + " suspended for a human (checkpoint " + suspendedAt + "); the supervisor suspends with it",
			Context: map[string]any{"agentId": parentID, "subAgentId": a.AgentID, "checkpointId": suspendedAt},
		}
	}
	return res.output, nil
}

func (s *supervisorRuntime) acquire(sa *core.SubAgent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Max > 0 && s.active >= s.cfg.Max {
		return &core.BreadError{
			Code:    core.CodeDelegationLimit,
			Message: "delegation limit reached: at most " + strconv.Itoa(s.cfg.Max) + " delegations may run at once; wait for a result before delegating again",
			Context: map[string]any{"subAgentId": sa.AgentID, "max": s.cfg.Max, "active": s.active},
		}
	}
	if sa.Max > 0 && s.perAgent[sa.AgentID] >= sa.Max {
		return &core.BreadError{
			Code:    core.CodeDelegationLimit,
			Message: "delegation limit reached for " + sa.AgentID + ": at most " + strconv.Itoa(sa.Max) + " at once",
			Context: map[string]any{"subAgentId": sa.AgentID, "max": sa.Max, "active": s.perAgent[sa.AgentID]},
		}
	}
	s.active++
	s.perAgent[sa.AgentID]++
	return nil
}

func (s *supervisorRuntime) release(agentID string) {
	s.mu.Lock()
	s.active--
	s.perAgent[agentID]--
	s.mu.Unlock()
}

func (s *supervisorRuntime) takeHeld() []core.Crumb {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held
	s.held = nil
	return h
}

// filterSubAgentCrumb decides what of a delegated run's crumb reaches the
// client under a visibility. human:required and human:resumed always do:
// swallowing them would leave a suspended run nobody can answer.
func filterSubAgentCrumb(c core.Crumb, subAgentID, parentID string, vis core.Visibility) core.Crumb {
	switch c.(type) {
	case *core.HumanRequired, *core.HumanResumed:
		return c
	}
	switch vis {
	case core.Hidden:
		return nil
	case core.Mediate:
		b := *c.Base()
		if b.AgentID != subAgentID {
			return nil
		}
		switch v := c.(type) {
		case *core.AgentRunStart:
			return &core.SubagentRunStart{CrumbBase: b, ParentAgentID: parentID, SubagentID: subAgentID}
		case *core.AgentRunEnd:
			return &core.SubagentRunEnd{CrumbBase: b, ParentAgentID: parentID, SubagentID: subAgentID, Output: v.Output}
		}
		return nil
	}
	return c
}

// pendingDelegation is a call whose child suspended: a delegate call's
// run, or a loop tool's iteration pipeline (loop set), which may wait on
// several checkpoints (its parallel branches, a set of humans).
type pendingDelegation struct {
	call          toolCall
	checkpointIDs []string
	subAgentID    string
	loop          *core.LoopProgress
}

// link is the continuation of the run waiting on d, the run's checkpoint
// being waiting.
func (d pendingDelegation) link(waiting string) *core.CheckpointParent {
	kind := core.ParentSupervisor
	if d.loop != nil {
		kind = core.ParentLoop
	}
	return &core.CheckpointParent{Kind: kind, CheckpointID: waiting, ToolCallID: d.call.ID, Loop: d.loop}
}

// suspendedDelegations picks the calls of a turn whose children suspended.
func suspendedDelegations(calls []toolCall, results []toolOutcome) []pendingDelegation {
	var out []pendingDelegation
	for i, o := range results {
		if i >= len(calls) || o.err == nil || o.err.Code != core.CodeDelegationSuspended {
			continue
		}
		d := pendingDelegation{call: calls[i]}
		if cp, _ := o.err.Context["checkpointId"].(string); cp != "" {
			d.checkpointIDs = []string{cp}
		}
		if cps, ok := o.err.Context["checkpointIds"].([]string); ok {
			d.checkpointIDs = cps
		}
		d.subAgentID, _ = o.err.Context["subAgentId"].(string)
		d.loop, _ = o.err.Context["loop"].(*core.LoopProgress)
		out = append(out, d)
	}
	return out
}

// withOuter returns the chain p with link appended as its outermost
// continuation: once every level of p completes, link carries the output
// on.
func withOuter(p, link *core.CheckpointParent) *core.CheckpointParent {
	if p == nil {
		return link
	}
	c := *p
	c.Outer = withOuter(p.Outer, link)
	return &c
}

// chainSuspend suspends a supervisor whose delegations suspended: its turn is
// persisted with the delegate calls left unanswered, its checkpoint lists the
// pending children, each child's checkpoint is linked back to it, and only
// then do the children's human:required crumbs surface.
func (r *run) chainSuspend(ctx context.Context, fresh []core.Message, pending []pendingDelegation) (outcome, error) {
	first := pending[0]
	cp := core.CheckpointRecord{
		ID: r.in.newID(), AgentID: r.agent.ID, RunID: r.id, SessionID: r.sessionID,
		ToolName: first.call.Name, ToolCallID: first.call.ID, Schema: first.call.Input,
		Skill: r.opts.Skill, Parent: r.parent, CreatedAt: core.NowMillis(), Meta: withDelegationMeta(ctx, r.in.annotate(ctx)),
	}
	for _, d := range pending {
		pd := core.PendingDelegation{ToolCallID: d.call.ID, SubAgentID: d.subAgentID}
		if d.call.Name != delegateToolName {
			pd.ToolName = d.call.Name
		}
		if len(d.checkpointIDs) > 0 {
			pd.ChildCheckpointID = d.checkpointIDs[0]
		}
		cp.Pending = append(cp.Pending, pd)
	}
	if err := r.suspendRun(ctx, fresh, cp); err != nil {
		return outcome{}, err
	}
	for _, d := range pending {
		for _, id := range d.checkpointIDs {
			child, err := r.in.store.GetCheckpoint(ctx, id)
			if err != nil {
				return outcome{}, err
			}
			child.Parent = withOuter(child.Parent, d.link(cp.ID))
			if err := r.in.store.SaveCheckpoint(ctx, child); err != nil {
				return outcome{}, err
			}
		}
	}
	res := outcome{suspended: true, checkpointID: cp.ID}
	_, _ = r.recordEnd(ctx, res, nil) // before any human:required surfaces
	var held []core.Crumb
	if r.supervisor != nil {
		held = append(held, r.supervisor.takeHeld()...)
	}
	if r.loop != nil {
		held = append(held, r.loop.takeHeld()...)
	}
	for _, c := range held {
		r.emit(c)
	}
	r.hooks.onSuspend(ctx, r.hookContext(core.HookAgent), first.call.Name, cp.ID)
	return res, nil
}

// continueSupervisor feeds a completed child's output back to the supervisor
// waiting on it. Every child records its result; the one whose settlement
// completes the supervisor's join removes the supervisor's checkpoint and
// continues its run, which may hand its own output up to its parent in turn.
func (in *Instance) continueSupervisor(ctx context.Context, out sink, link *core.CheckpointParent, childOutput any) (outcome, error) {
	scp, err := in.store.GetCheckpoint(ctx, link.CheckpointID)
	if err != nil {
		if isCode(err, core.CodeCheckpointNotFound) {
			// The supervisor's session was deleted, or a sibling's resume
			// already continued it: nothing is left to do.
			return outcome{}, nil
		}
		return outcome{}, err
	}
	slot := slices.IndexFunc(scp.Pending, func(p core.PendingDelegation) bool { return p.ToolCallID == link.ToolCallID })
	if slot < 0 {
		return outcome{}, core.Errorf(core.CodePipelineStateLost, "supervisor checkpoint %s does not wait on delegation %s", scp.ID, link.ToolCallID)
	}
	toolName := cmp.Or(scp.Pending[slot].ToolName, delegateToolName)
	answer := childOutput
	if lp := link.Loop; lp != nil {
		// A loop iteration's pipeline completed: the iteration is recorded
		// and the host's loop tool call answered with its progress.
		if answer, err = in.finishIteration(ctx, out, scp, lp, childOutput); err != nil {
			return outcome{}, err
		}
	}
	result, err := core.AsJSON(answer)
	if err != nil {
		return outcome{}, err
	}
	toolMsg := core.Message{Role: core.RoleTool, Parts: []core.Part{{Type: core.PartToolResult, ToolCallID: link.ToolCallID, ToolName: toolName, Output: result}}}
	if err := in.persist(ctx, scp.SessionID, toolMsg); err != nil {
		return outcome{}, err
	}
	// Children finishing at the same moment each answer their own delegate
	// call; the supervisor's join decides, once, which of them continues it.
	if _, complete, err := in.store.SettleJoin(ctx, scp.ID, len(scp.Pending), slot, result); err != nil || !complete {
		return outcome{suspended: true, checkpointID: scp.ID}, err
	}
	if _, err := in.store.DeleteCheckpoint(ctx, scp.ID); err != nil {
		if isCode(err, core.CodeCheckpointNotFound) {
			return outcome{}, nil
		}
		return outcome{}, err
	}
	rt, ok := in.agents[scp.AgentID]
	if !ok {
		return outcome{}, core.Errorf(core.CodeAgentNotFound, "agent %s of checkpoint %s is not registered", scp.AgentID, scp.ID)
	}
	r := in.newRun(rt, scp.RunID, scp.SessionID, childOutput, core.RunOptions{Skill: scp.Skill})
	r.parent = scp.Parent
	return r.continueFrom(in.delegationFromMeta(core.WithCheckpointMeta(ctx, scp.Meta), scp.Meta), out)
}

// continueFrom continues a run from its persisted history (a resumed
// supervisor) in a nested stream, then hands the output up its composition.
func (r *run) continueFrom(ctx context.Context, out sink) (outcome, error) {
	res, err := func() (outcome, error) {
		ctx, done := r.bind(ctx, nested{out})
		defer done()
		return r.continueRun(ctx)
	}()
	if err != nil || res.suspended || r.parent == nil {
		return res, err
	}
	return r.in.continueParent(ctx, out, r.parent, res.output)
}

func isCode(err error, code string) bool {
	var be *core.BreadError
	return errors.As(err, &be) && be.Code == code
}
