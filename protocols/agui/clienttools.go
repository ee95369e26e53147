package agui

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
)

// toolAnswer is a tool message matched to the checkpoint of the call it
// answers.
type toolAnswer struct {
	checkpointID string
	// content is the tool's result as the engine's answer: a JSON string.
	content json.RawMessage
}

// toolAnswers matches the tool messages that end a RunAgentInput to the
// calls the thread's waiting run has pending. A tool message that matches
// no pending call is history the client resent (its call answered long
// ago) and is left alone, unless nothing else in the request answers
// anything: then the client answered a call that is not pending,
// CHECKPOINT_NOT_FOUND. A call waiting for an approval cannot be answered
// with a tool message (VALIDATION_ERROR): it takes a resume entry.
func (p *Plugin) toolAnswers(ctx context.Context, thread string, results []ToolResult, resuming bool) ([]toolAnswer, error) {
	if len(results) == 0 {
		return nil, nil
	}
	pending, err := p.pendingCalls(ctx, thread)
	if err != nil {
		return nil, err
	}
	var out []toolAnswer
	for _, r := range results {
		cp, ok := pending[r.ToolCallID]
		if !ok {
			continue
		}
		if cp.Kind == core.HumanApproval {
			return nil, invalid("tool call " + quote(r.ToolCallID) + " waits for an approval (" + ReasonToolApproval + "); answer its interrupt " + quote(cp.ID) + " with a resume entry")
		}
		raw, _ := json.Marshal(r.Content)
		out = append(out, toolAnswer{checkpointID: cp.ID, content: raw})
	}
	if len(out) == 0 && !resuming {
		return nil, &core.BreadError{Code: core.CodeCheckpointNotFound,
			Message: "no call of tool call " + quote(results[len(results)-1].ToolCallID) + " is pending on thread " + quote(thread)}
	}
	return out, nil
}

// pendingCalls returns the checkpoints of the calls the thread's runs wait
// on, by the model's tool call id: from the thread's suspended run records
// (and the other checkpoints of their sets) when the store lists runs,
// else from every checkpoint.
func (p *Plugin) pendingCalls(ctx context.Context, thread string) (map[string]core.CheckpointRecord, error) {
	store := p.rt.Storage()
	out := map[string]core.CheckpointRecord{}
	if !store.Has(core.StoreRuns | core.StoreRunList) {
		cps, err := store.ListCheckpoints(ctx)
		if err != nil {
			return nil, err
		}
		for _, cp := range cps {
			if cp.SessionID == thread && len(cp.Pending) == 0 {
				out[cp.ToolCallID] = cp
			}
		}
		return out, nil
	}
	runs, err := store.ListRuns(ctx, core.RunFilter{SessionID: thread, Status: core.RunSuspended})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range runs {
		if r.CheckpointID != "" && !slices.Contains(ids, r.CheckpointID) {
			ids = append(ids, r.CheckpointID)
		}
	}
	for i := 0; i < len(ids) && i < 4*maxResumeEntries; i++ {
		cp, err := store.GetCheckpoint(ctx, ids[i])
		if errors.Is(err, core.ErrCheckpointNotFound) || isCode(err, core.CodeCheckpointNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if cp.SessionID == thread && len(cp.Pending) == 0 {
			out[cp.ToolCallID] = cp
		}
		if cp.Set != nil {
			for _, id := range cp.Set.CheckpointIDs {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	return out, nil
}

// startState is the state the AG-UI run starts with (its STATE_SNAPSHOT):
// the client's, when it gave one, else the thread's as stored; nil for
// none (no snapshot then).
func (p *Plugin) startState(ctx context.Context, turn Turn) json.RawMessage {
	if turn.Client.HasState() {
		return turn.Client.State
	}
	return p.threadState(ctx, turn.ThreadID)
}

// threadState is the thread's state document as stored; nil for none.
func (p *Plugin) threadState(ctx context.Context, thread string) json.RawMessage {
	store := p.rt.Storage()
	if !store.Has(core.StoreSessionState) {
		return nil
	}
	doc, err := store.GetSessionState(ctx, thread)
	if err != nil {
		return nil // a new thread, or one the caller may not read: no state
	}
	return doc
}

// threadMessages is the thread's history as AG-UI messages, for the
// MESSAGES_SNAPSHOT that ends an AG-UI run; nil when it cannot be read.
func (p *Plugin) threadMessages(ctx context.Context, thread string) []types.Message {
	stored, err := p.rt.Storage().GetMessages(ctx, thread)
	if err != nil || len(stored) == 0 {
		return nil
	}
	return historyMessages(stored)
}

// history is the MESSAGES_SNAPSHOT the AG-UI run starts with: the thread's
// stored history as AG-UI messages, then the request's new message, when a
// new message comes with fewer messages before it than the thread holds (a
// page opened on an existing thread, which knows none of it); nil
// otherwise. A request that answers (resume, tool messages) gets none: it
// continues the run the client is showing.
func (p *Plugin) history(ctx context.Context, turn Turn) []types.Message {
	if len(turn.Resume) > 0 || len(turn.ToolResults) > 0 {
		return nil
	}
	msgs := p.threadMessages(ctx, turn.ThreadID)
	if msgs == nil || turn.Prior >= len(msgs) {
		return nil
	}
	return append(msgs, turn.New...)
}
