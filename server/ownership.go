package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/breadai/bread/core"
)

// Ownership is the run-ownership policy: a run may be tailed, read,
// cancelled, its files fetched (AuthorizeStream, for
// Options.Streams.AuthorizeStream) and, with Resume, resumed (Authorize,
// around Options.Auth.Authorize) only by the identity that started it (core.RunRecord.StartedBy, compared by
// core.OwnerKey) and by the identities Admin names. Others get 403.
//
// It runs after the action grant: Authorize decides which actions a caller
// may perform, Ownership which runs. Without auth (no identity in the
// request) it allows everything: a loopback server without auth has one
// tenant.
type Ownership struct {
	// Store holds the run records and checkpoints it reads. A store that
	// keeps no run records (core.StoreRuns) records no starter: every run
	// is allowed. It is put behind a core.Storage once, on first use (a
	// *core.Storage, such as the engine's, is used as it is).
	Store core.BreadStore
	// Admin reports whether an identity may act on every run (nil:
	// nobody).
	Admin func(*core.AuthIdentity) bool
	// Resume applies the check to POST /resume/{checkpointId}: only the
	// starter of the checkpoint's run (or an admin) may resume it.
	Resume bool
	// Sessions turns on the store's session ownership rule
	// (core.Storage.OwnSessions, with Admin): a session is its creator's
	// and the admins', on every route and protocol that names one (the run
	// routes' body, GET and DELETE /sessions/{id}, its messages, the
	// listing and cleanup, resume, A2A, AG-UI, background runs, and the
	// loops and task runs of GET /loops and /tasks), and to anyone else it
	// is a missing session (404 SESSION_NOT_FOUND, or a run that ends with
	// SESSION_NOT_FOUND). The rule is the Storage's, so
	// Store must be the one the engine uses (the *core.Storage given as
	// engine.Config.Store, or inst.Storage()); Authorize turns it on.
	Sessions bool
	// Logger receives store failures (which deny); nil uses slog.Default.
	Logger *slog.Logger

	once sync.Once
	st   *core.Storage
}

// AuthorizeStream is a core.AuthorizeStreamFunc: nil identity (no auth),
// an admin, a stream token minted for runID, a run whose record is unknown
// (the route answers for it) or a run whose StartedBy is the identity's
// owner key is allowed. A run with no recorded starter (started without
// auth, or before runs recorded one) is the admins' only.
func (o *Ownership) AuthorizeStream(ctx context.Context, id *core.AuthIdentity, runID string) bool {
	if id == nil {
		return true
	}
	if run, ok := StreamTokenRun(id); ok {
		// A stream token is minted only for a caller that passed this
		// check for that run.
		return run == runID
	}
	if o.Admin != nil && o.Admin(id) {
		return true
	}
	st := o.storage()
	if !st.Has(core.StoreRuns) {
		return true
	}
	rec, err := st.GetRun(ctx, runID)
	switch {
	case errors.Is(err, core.ErrRunNotFound):
		return true
	case err != nil:
		o.logger().WarnContext(ctx, "bread: reading a run's starter failed; refusing the request", "runId", runID, "error", err)
		return false
	}
	return rec.StartedBy != "" && rec.StartedBy == core.OwnerKey(id)
}

// Authorize wraps a route authorization: after inner grants the action,
// run.resume (with Resume) also needs AuthorizeStream of the checkpoint's
// run. With Sessions it turns the store's session rule on, now: sessions
// need no route check, the Storage answers for them. A nil inner stays nil
// (the server then refuses every route).
func (o *Ownership) Authorize(inner core.AuthorizeFunc) core.AuthorizeFunc {
	o.storage()
	if inner == nil {
		return nil
	}
	return func(ctx context.Context, id *core.AuthIdentity, action string, args map[string]string) bool {
		if !inner(ctx, id, action, args) {
			return false
		}
		if id == nil {
			return true
		}
		if action != core.ActionRunResume || !o.Resume {
			return true
		}
		if _, ok := StreamTokenRun(id); ok {
			return false
		}
		cp, err := o.storage().GetCheckpoint(ctx, args["checkpointId"])
		switch {
		case errors.Is(err, core.ErrCheckpointNotFound):
			return true // the route answers for an unknown checkpoint
		case err != nil:
			o.logger().WarnContext(ctx, "bread: reading a checkpoint's run failed; refusing the resume", "error", err)
			return false
		}
		return o.AuthorizeStream(ctx, id, cp.RunID)
	}
}

// storage is Store behind its portable type, built on first use, with the
// session rule on when Sessions asks for it.
func (o *Ownership) storage() *core.Storage {
	o.once.Do(func() {
		o.st = core.NewStorage(o.Store)
		if o.Sessions && o.st != nil {
			o.st.OwnSessions(core.SessionOwners{Admin: o.Admin})
		}
	})
	return o.st
}

func (o *Ownership) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}
