package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/breadai/bread/core"
)

// errInterrupted is the cause of a run cancelled because a newer run
// arrived for its session under the interrupt or rollback policy.
var errInterrupted = &core.BreadError{Code: core.CodeRunCancelled, Message: "the run was interrupted by a newer run on its session"}

// sessionGate lets one top-level run at a time hold a session on this
// instance. A run that finds its session held is refused, queued, or takes
// the session over from the holder, by its agent's ConcurrencyPolicy.
type sessionGate struct {
	mu    sync.Mutex
	slots map[string]*sessionSlot
}

// sessionSlot is a held session: the holder, and the runs waiting for it in
// arrival order.
type sessionSlot struct {
	holder *sessionHold
	queue  []*sessionHold
}

// sessionHold is one run's claim on a session. ready is closed when the
// claim is granted; a claim granted at once has none (nil: made only for
// a claim that waits, which is rare).
type sessionHold struct {
	ready  chan struct{}
	cancel context.CancelCauseFunc
	// written counts the messages added to the session while this run held
	// it; undoOnRelease is set when a rollback asks for them to be removed
	// by the run that takes the session over.
	written       int
	undoOnRelease bool
	// undo is the number of messages of the previous holder this run must
	// remove before it starts (rollback).
	undo int
}

func newSessionGate() *sessionGate { return &sessionGate{slots: map[string]*sessionSlot{}} }

// acquire claims sessionID for a run with policy. cancel cancels that run's
// context; the gate calls it when a later run interrupts this one. On
// success the run holds the session until release; undo is how many
// messages the run it took the session from (rollback) added, which the
// caller removes before it starts.
func (g *sessionGate) acquire(ctx context.Context, sessionID string, policy core.ConcurrencyPolicy, cancel context.CancelCauseFunc) (h *sessionHold, err error) {
	h = &sessionHold{cancel: cancel}
	g.mu.Lock()
	slot := g.slots[sessionID]
	if slot == nil {
		g.slots[sessionID] = &sessionSlot{holder: h}
		g.mu.Unlock()
		return h, nil
	}
	h.ready = make(chan struct{})
	switch policy {
	case core.ConcurrencyEnqueue:
		slot.queue = append(slot.queue, h)
	case core.ConcurrencyInterrupt, core.ConcurrencyRollback:
		// The new run is next: it goes before any queued run, and the
		// holder is cancelled. It starts once the holder has ended.
		slot.queue = append([]*sessionHold{h}, slot.queue...)
		if policy == core.ConcurrencyRollback {
			slot.holder.undoOnRelease = true
		}
		slot.holder.cancel(errInterrupted)
	default:
		g.mu.Unlock()
		return nil, &core.BreadError{Code: core.CodeSessionBusy, Message: "a run is already running on session " + quoteTruncated(sessionID) + "; retry when it ends",
			Context: map[string]any{"sessionId": sessionID}}
	}
	g.mu.Unlock()
	if p := presetFrom(ctx); p != nil {
		p.waiting(sessionID)
	}
	select {
	case <-h.ready:
		return h, nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-h.ready:
			// Granted while giving up: pass the session on.
			g.releaseLocked(sessionID, h)
		default:
			slot.queue = removeHold(slot.queue, h)
		}
		return nil, context.Cause(ctx)
	}
}

// wrote counts n messages added to sessionID by the run holding it.
func (g *sessionGate) wrote(sessionID string, n int) {
	g.mu.Lock()
	if slot := g.slots[sessionID]; slot != nil && slot.holder != nil {
		slot.holder.written += n
	}
	g.mu.Unlock()
}

// release gives sessionID up: the next queued run gets it, or the session
// is free.
func (g *sessionGate) release(sessionID string, h *sessionHold) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseLocked(sessionID, h)
}

func (g *sessionGate) releaseLocked(sessionID string, h *sessionHold) {
	slot := g.slots[sessionID]
	if slot == nil || slot.holder != h {
		return
	}
	if len(slot.queue) == 0 {
		delete(g.slots, sessionID)
		return
	}
	next := slot.queue[0]
	slot.queue = slot.queue[1:]
	if h.undoOnRelease {
		next.undo = h.written
	}
	slot.holder = next
	close(next.ready)
}

func removeHold(q []*sessionHold, h *sessionHold) []*sessionHold {
	for i, x := range q {
		if x == h {
			return append(q[:i], q[i+1:]...)
		}
	}
	return q
}

// sessionPolicy resolves an agent's busy-session policy: its own, then the
// instance's default, then reject. Rollback needs a store that can remove
// messages.
func (in *Instance) sessionPolicy(rt *agentRT) error {
	p := rt.Concurrency
	if p == "" {
		p = in.cfg.SessionConcurrency
	}
	if p == "" {
		p = core.ConcurrencyReject
	}
	if !p.Valid() {
		return &core.BreadError{Code: core.CodeInvalidConfig, Message: "agent " + rt.ID + ": concurrency " + quoteTruncated(string(p)) + " is not reject, enqueue, interrupt or rollback",
			Context: map[string]any{"agentId": rt.ID}}
	}
	if p == core.ConcurrencyRollback && !in.store.Has(core.StoreMessageDelete) {
		return &core.BreadError{Code: core.CodeInvalidConfig, Message: "agent " + rt.ID + ": concurrency rollback needs a store that removes messages (core.MessageDeleter)",
			Context: map[string]any{"agentId": rt.ID}}
	}
	if !rt.OnLost.Valid() || rt.OnLost.MaxAttempts < 0 {
		return &core.BreadError{Code: core.CodeInvalidConfig, Message: "agent " + rt.ID + ": onLost " + quoteTruncated(string(rt.OnLost.Action)) + " is not fail or retry, or its maxAttempts is negative",
			Context: map[string]any{"agentId": rt.ID}}
	}
	rt.concurrency = p
	return nil
}

// rollback removes the last n messages of a session: those the run this
// one interrupted had added.
func (in *Instance) rollback(ctx context.Context, sessionID string, n int) error {
	if !in.store.Has(core.StoreMessageDelete) {
		return nil
	}
	msgs, err := in.store.GetMessages(ctx, sessionID)
	if err != nil {
		return err
	}
	n = min(n, len(msgs))
	ids := make([]string, 0, n)
	for _, m := range msgs[len(msgs)-n:] {
		ids = append(ids, m.ID)
	}
	if _, err := in.store.DeleteMessages(ctx, sessionID, ids); err != nil {
		return fmt.Errorf("bread: rolling back the interrupted run's messages: %w", err)
	}
	return nil
}
