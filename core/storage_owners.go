package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// SessionOwners is the session ownership rule of a Storage (OwnSessions):
// a session belongs to the identity that created it (Session.Owner), and
// another identity neither sees, continues, reads nor deletes it.
type SessionOwners struct {
	// Admin reports whether an identity may act on every session (nil:
	// nobody).
	Admin func(*AuthIdentity) bool
}

// OwnSessions turns the session ownership rule on for every call made
// through s from then on; call it while setting up, before s serves. It is
// a domain rule rather than a route check so that every entry point that
// names a session (an HTTP route, a run's body, A2A's contextId, AG-UI's
// threadId, a background job, a resume) meets it the same way.
//
// The caller is the identity in the call's context (IdentityFrom). A call
// without one (no auth, a schedule, the engine's own upkeep) and an admin's
// act on every session. Any other caller acts on the sessions whose Owner
// is its OwnerKey; to it another identity's session, or one created
// without an identity, is indistinguishable from a missing one:
//
//   - GetSession, GetMessages, AddMessage, SuspendRun and DeleteMessages
//     answer ErrSessionNotFound's code, with the store's own message;
//   - GetCheckpoint answers ErrCheckpointNotFound for a checkpoint of such
//     a session, so nobody resumes another's run;
//   - DeleteSession answers ErrSessionNotFound for such a session and for a
//     missing one (deleting a missing session is otherwise not an error);
//   - ListSessions and CleanupSessions see only the caller's sessions;
//   - ListLoops and ListTaskRuns see only the loops and task runs of the
//     caller's sessions, and GetLoop and GetTaskRun answer ErrLoopNotFound
//     and ErrTaskRunNotFound for any other (a standalone task run, which
//     has no session, among them);
//   - CreateSession, with an id another identity's session holds, answers
//     ErrSessionNotFound, as CheckSession does before a run waits for a
//     session.
//
// Session ids are one namespace, so a caller that names a new session
// could learn that an id is taken (never by whom, nor what it holds) from
// the refusal. Under the rule such a caller may therefore create a session
// with an id of its choosing only when the id is a random UUID (version 4
// or 7, in its 36-character form, as the engine generates): learning that
// one is taken needs the id itself. Any other id it names must be one of
// its own sessions; else, missing or another's alike, it is
// SESSION_NOT_FOUND with the same message (UnguessableSessionID).
func (s *Storage) OwnSessions(rule SessionOwners) { s.owners.Store(&rule) }

// SessionsOwned reports whether OwnSessions turned the rule on.
func (s *Storage) SessionsOwned() bool { return s.owners.Load() != nil }

// sessionScope is who the caller of ctx is to the rule: all when it may act
// on every session, else the owner key whose sessions it may (an identity
// without a subject has none, and may act on none).
func (s *Storage) sessionScope(ctx context.Context) (owner string, all bool) {
	rule := s.owners.Load()
	if rule == nil {
		return "", true
	}
	id := IdentityFrom(ctx)
	if id == nil || (rule.Admin != nil && rule.Admin(id)) {
		return "", true
	}
	return OwnerKey(id), false
}

// SeesSessionsOf reports whether the caller of ctx may act on the sessions
// whose Owner is owner (an OwnerKey; empty for sessions created without an
// identity): always with the rule off, for a call without an identity and
// for an admin; else only when owner is the caller's own key. A listing of
// what names sessions without reading them (the schedules of bread.yaml)
// asks it.
func (s *Storage) SeesSessionsOf(ctx context.Context, owner string) bool {
	mine, all := s.sessionScope(ctx)
	return all || (mine != "" && mine == owner)
}

// sessionHidden is the refusal of a session the caller may not see: the
// code and message a store gives for a missing one.
func sessionHidden(id string) error {
	return &BreadError{Code: CodeSessionNotFound, Message: fmt.Sprintf("session %q not found", id)}
}

// ownedSession reads session id for the caller of ctx: the store's answer
// when the caller may act on every session, else the session when it is
// the caller's and sessionHidden when it is another's.
func (s *Storage) ownedSession(ctx context.Context, id string) (Session, error) {
	owner, all := s.sessionScope(ctx)
	sess, err := s.store.GetSession(ctx, id)
	if err != nil || all {
		return sess, err
	}
	if owner == "" || sess.Owner != owner {
		return Session{}, sessionHidden(id)
	}
	return sess, nil
}

// mayUseSession is nil when the caller of ctx may act on session id (its
// own, or any under no rule), sessionHidden when not, and the store's
// error when the read fails (a missing session among them).
func (s *Storage) mayUseSession(ctx context.Context, id string) error {
	if _, all := s.sessionScope(ctx); all {
		return nil
	}
	_, err := s.ownedSession(ctx, id)
	return err
}

// sessionHiddenFrom reports whether what belongs to session id (a loop, a
// task run) is hidden from the caller of ctx: never when it may act on
// every session; else when the record has no session, or its session is
// another's or gone. A failed read is its error.
func (s *Storage) sessionHiddenFrom(ctx context.Context, id string) (bool, error) {
	if _, all := s.sessionScope(ctx); all {
		return false, nil
	}
	if id == "" {
		return true, nil
	}
	_, err := s.ownedSession(ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		return true, nil
	}
	return false, err
}

// UnguessableSessionID reports whether id is a random UUID (version 4 or
// 7, RFC 9562 variant) in its 36-character form: the only ids with which,
// under the ownership rule (OwnSessions), a caller that may not act on
// every session creates a session of its own naming.
func UnguessableSessionID(id string) bool {
	if len(id) != 36 {
		return false
	}
	u, err := uuid.Parse(id)
	return err == nil && u.Variant() == uuid.RFC4122 && (u.Version() == 4 || u.Version() == 7)
}

// sessionUnclaimed is the refusal of a session id that is not the caller's
// and that it may not create (not UnguessableSessionID): the same whether
// the id is free or another's.
func sessionUnclaimed(id string) error {
	return &BreadError{Code: CodeSessionNotFound, Message: fmt.Sprintf(
		"session %q not found; under session ownership a new session's id must be a random UUID (version 4 or 7), or left out for the server to choose", id)}
}

// CheckSession reports whether the caller of ctx may continue session id:
// nil when the session is its own, when it does not exist and the caller
// may create it (a run then does), or when no rule is on;
// SESSION_NOT_FOUND when another identity owns it, or when it does not
// exist and its id is not UnguessableSessionID. The engine asks it before
// a run waits for a session a client names, so that wait tells nothing
// about another identity's session.
func (s *Storage) CheckSession(ctx context.Context, id string) error {
	if err := s.open(); err != nil {
		return err
	}
	owner, all := s.sessionScope(ctx)
	if all {
		return nil
	}
	sess, err := s.store.GetSession(ctx, id)
	switch {
	case !UnguessableSessionID(id):
		if err == nil && owner != "" && sess.Owner == owner {
			return nil
		}
		if err != nil && !errors.Is(err, ErrSessionNotFound) {
			return err
		}
		return sessionUnclaimed(id)
	case errors.Is(err, ErrSessionNotFound):
		return nil // free: the run creates it for the caller
	case err != nil:
		return err
	case owner == "" || sess.Owner != owner:
		return sessionHidden(id)
	}
	return nil
}
