package core

import "context"

// RunFence conditions a store write on a run still being its writer's: the
// write is made only while the run's record holds Token as its Fence (or
// while the run has no record at all: one whose first write failed has
// nothing to be taken). A run that executes mints a token, writes it into
// its record when it goes running (RunRecord.Fence), and makes every later
// durable write of it under that token (WithRunFence): its crumbs, its
// session's messages, its checkpoints, its record. Another instance that
// takes the run (LoseRun, or a resume or a retried attempt that writes its
// own token) changes the record's Fence, and from then on every write the
// first one makes is refused with ErrRunTaken, in the store and atomically
// with the write: an owner paused (SIGSTOP) past its lease and declared
// lost writes nothing when it wakes, whatever moment the pause fell on.
//
// The stores that keep run records (core.StoreRuns) honour a fence in the
// context of AppendCrumbs, AddMessage, SuspendRun, SaveCheckpoint, PutRun,
// EndRun and WriteRun; core/storetest checks it ("run fence").
type RunFence struct {
	RunID string
	Token string
}

type runFenceKey struct{}

// fenceCtx is a context carrying a fence: one allocation where
// context.WithValue made two (the context and f boxed in an interface),
// twice a run (issue 32). Everything else is its parent's.
type fenceCtx struct {
	context.Context
	f RunFence
}

// Value answers the fence's key with the fenceCtx itself (a pointer: no
// allocation per lookup) and any other key as the parent does.
func (c *fenceCtx) Value(key any) any {
	if key == (runFenceKey{}) {
		return c
	}
	return c.Context.Value(key)
}

func (c *fenceCtx) String() string { return "core.WithRunFence(" + c.f.RunID + ")" }

// WithRunFence returns ctx with f: the fenced writes made with it (see
// RunFence) are made only while run f.RunID holds f.Token. A zero f
// removes a fence ctx carries.
func WithRunFence(ctx context.Context, f RunFence) context.Context {
	if ctx == nil {
		panic("core.WithRunFence: nil parent context")
	}
	return &fenceCtx{Context: ctx, f: f}
}

// RunFenceFrom returns the fence of ctx, if it carries one.
func RunFenceFrom(ctx context.Context) (RunFence, bool) {
	c, ok := ctx.Value(runFenceKey{}).(*fenceCtx)
	if !ok {
		return RunFence{}, false
	}
	return c.f, c.f.RunID != ""
}

// Admits reports whether f lets a write through given the run's stored
// record: there is none (exists false), or it holds f's token.
func (f RunFence) Admits(stored string, exists bool) bool {
	return !exists || stored == f.Token
}

// Taken is the error of a write f refused.
func (f RunFence) Taken() *BreadError {
	return &BreadError{Code: CodeRunTaken, Message: "run " + f.RunID + " was taken from this writer (declared lost, or run by another attempt): the write was refused",
		Context: map[string]any{"runId": f.RunID}}
}
