package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// The calls of Storage, by port: each has the contract written on the
// port's method (store.go, runs.go, concurrency.go). A call of an optional
// part the store lacks answers an error matching ErrNotImplemented unless
// its comment names another fallback.

// CreateSession implements SessionStore. A session created without an
// Owner is the caller's: Owner is OwnerKey(IdentityFrom(ctx)), whether or
// not the ownership rule (OwnSessions) is on. Under the rule, an id another
// identity's session holds answers as a missing session would, and a
// caller that may not act on every session names only an
// UnguessableSessionID.
func (s *Storage) CreateSession(ctx context.Context, n NewSession) (Session, error) {
	if err := s.open(); err != nil {
		return Session{}, err
	}
	if n.Owner == "" {
		n.Owner = OwnerKey(IdentityFrom(ctx))
	}
	if _, all := s.sessionScope(ctx); !all && n.ID != "" && !UnguessableSessionID(n.ID) {
		return Session{}, sessionUnclaimed(n.ID)
	}
	sess, err := s.store.CreateSession(ctx, n)
	if err != nil && n.ID != "" {
		// A store's duplicate-id error would tell that the id is taken.
		if owner, all := s.sessionScope(ctx); !all {
			if cur, gerr := s.store.GetSession(ctx, n.ID); gerr == nil && (owner == "" || cur.Owner != owner) {
				return Session{}, sessionHidden(n.ID)
			}
		}
	}
	return sess, err
}

// GetSession implements SessionStore; under the ownership rule another
// identity's session is ErrSessionNotFound.
func (s *Storage) GetSession(ctx context.Context, id string) (Session, error) {
	if err := s.open(); err != nil {
		return Session{}, err
	}
	return s.ownedSession(ctx, id)
}

// ListSessions implements SessionStore; under the ownership rule it lists
// the caller's sessions only.
func (s *Storage) ListSessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	if owner, all := s.sessionScope(ctx); !all {
		if owner == "" {
			return []Session{}, nil
		}
		f.Owner = owner
	}
	return s.store.ListSessions(ctx, f)
}

// DeleteSession implements SessionStore; under the ownership rule a caller
// that may not act on every session deletes only its own, and a session it
// may not see (missing or another's) is ErrSessionNotFound.
func (s *Storage) DeleteSession(ctx context.Context, id string) error {
	if err := s.open(); err != nil {
		return err
	}
	if _, all := s.sessionScope(ctx); !all {
		if _, err := s.ownedSession(ctx, id); err != nil {
			return err
		}
	}
	return s.store.DeleteSession(ctx, id)
}

// CleanupSessions implements SessionStore; under the ownership rule it
// deletes only the caller's sessions.
func (s *Storage) CleanupSessions(ctx context.Context, o CleanupOptions) (int, error) {
	if err := s.open(); err != nil {
		return 0, err
	}
	if owner, all := s.sessionScope(ctx); !all {
		if owner == "" {
			return 0, nil
		}
		o.Owner = owner
	}
	return s.store.CleanupSessions(ctx, o)
}

// GetMessages implements SessionStore; under the ownership rule another
// identity's session is ErrSessionNotFound.
func (s *Storage) GetMessages(ctx context.Context, sessionID string) ([]SessionMessage, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	if err := s.mayUseSession(ctx, sessionID); err != nil {
		return nil, err
	}
	return s.store.GetMessages(ctx, sessionID)
}

// AddMessage implements SessionStore; under the ownership rule another
// identity's session is ErrSessionNotFound.
func (s *Storage) AddMessage(ctx context.Context, sessionID string, m SessionMessage) error {
	if err := s.open(); err != nil {
		return err
	}
	if err := s.mayUseSession(ctx, sessionID); err != nil {
		return err
	}
	return s.store.AddMessage(ctx, sessionID, m)
}

// SaveCheckpoint implements CheckpointStore.
func (s *Storage) SaveCheckpoint(ctx context.Context, cp CheckpointRecord) error {
	if err := s.open(); err != nil {
		return err
	}
	return s.store.SaveCheckpoint(ctx, cp)
}

// GetCheckpoint implements CheckpointStore; under the ownership rule a
// checkpoint of a session the caller may not see is ErrCheckpointNotFound.
func (s *Storage) GetCheckpoint(ctx context.Context, id string) (CheckpointRecord, error) {
	if err := s.open(); err != nil {
		return CheckpointRecord{}, err
	}
	cp, err := s.store.GetCheckpoint(ctx, id)
	if err != nil || cp.SessionID == "" {
		return cp, err
	}
	if err := s.mayUseSession(ctx, cp.SessionID); errors.Is(err, ErrSessionNotFound) {
		return CheckpointRecord{}, &BreadError{Code: CodeCheckpointNotFound, Message: fmt.Sprintf("checkpoint %q not found", id)}
	} else if err != nil {
		return CheckpointRecord{}, err
	}
	return cp, nil
}

// DeleteCheckpoint implements CheckpointStore.
func (s *Storage) DeleteCheckpoint(ctx context.Context, id string) (CheckpointRecord, error) {
	if err := s.open(); err != nil {
		return CheckpointRecord{}, err
	}
	return s.store.DeleteCheckpoint(ctx, id)
}

// ClaimCheckpoint implements CheckpointStore.
func (s *Storage) ClaimCheckpoint(ctx context.Context, id, claimant string, now, until int64) (CheckpointRecord, error) {
	if err := s.open(); err != nil {
		return CheckpointRecord{}, err
	}
	return s.store.ClaimCheckpoint(ctx, id, claimant, now, until)
}

// RenewCheckpointClaims implements CheckpointStore.
func (s *Storage) RenewCheckpointClaims(ctx context.Context, claimant string, until int64) (int, error) {
	if err := s.open(); err != nil {
		return 0, err
	}
	return s.store.RenewCheckpointClaims(ctx, claimant, until)
}

// SettleJoin implements CheckpointStore.
func (s *Storage) SettleJoin(ctx context.Context, joinID string, slots, slot int, output json.RawMessage) ([]json.RawMessage, bool, error) {
	if err := s.open(); err != nil {
		return nil, false, err
	}
	return s.store.SettleJoin(ctx, joinID, slots, slot, output)
}

// ListCheckpoints implements CheckpointStore.
func (s *Storage) ListCheckpoints(ctx context.Context) ([]CheckpointRecord, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	return s.store.ListCheckpoints(ctx)
}

// SuspendRun implements CheckpointStore.
func (s *Storage) SuspendRun(ctx context.Context, sessionID string, msgs []SessionMessage, cps ...CheckpointRecord) error {
	if err := s.open(); err != nil {
		return err
	}
	if err := s.mayUseSession(ctx, sessionID); err != nil {
		return err
	}
	return s.store.SuspendRun(ctx, sessionID, msgs, cps...)
}

// PutRun implements RunStore.
func (s *Storage) PutRun(ctx context.Context, r RunRecord) error {
	if err := s.can(StoreRuns); err != nil {
		return err
	}
	return s.runs.PutRun(ctx, r)
}

// EndRun implements RunStore.
func (s *Storage) EndRun(ctx context.Context, r RunRecord, owner string) (bool, error) {
	if err := s.can(StoreRuns); err != nil {
		return false, err
	}
	return s.runs.EndRun(ctx, r, owner)
}

// GetRun implements RunStore.
func (s *Storage) GetRun(ctx context.Context, id string) (RunRecord, error) {
	if err := s.can(StoreRuns); err != nil {
		return RunRecord{}, err
	}
	return s.runs.GetRun(ctx, id)
}

// RenewRunLeases implements RunStore.
func (s *Storage) RenewRunLeases(ctx context.Context, owner string, until int64) (int, error) {
	if err := s.can(StoreRuns); err != nil {
		return 0, err
	}
	return s.runs.RenewRunLeases(ctx, owner, until)
}

// ExpiredRuns implements RunStore.
func (s *Storage) ExpiredRuns(ctx context.Context, now int64, limit int) ([]RunRecord, error) {
	if err := s.can(StoreRuns); err != nil {
		return nil, err
	}
	return s.runs.ExpiredRuns(ctx, now, limit)
}

// LoseRun implements RunStore.
func (s *Storage) LoseRun(ctx context.Context, id string, now int64) (bool, error) {
	if err := s.can(StoreRuns); err != nil {
		return false, err
	}
	return s.runs.LoseRun(ctx, id, now)
}

// ListRuns implements RunLister.
func (s *Storage) ListRuns(ctx context.Context, f RunFilter) ([]RunRecord, error) {
	if err := s.can(StoreRunList); err != nil {
		return nil, err
	}
	return s.lister.ListRuns(ctx, f)
}

// CountRuns returns how many run records match f, ignoring its After and
// Limit: through the store's RunCounter when it has one, else by listing
// them.
func (s *Storage) CountRuns(ctx context.Context, f RunFilter) (int, error) {
	if err := s.can(StoreRunList); err != nil {
		return 0, err
	}
	f.After, f.Limit = nil, 0
	if s.counter != nil {
		return s.counter.CountRuns(ctx, f)
	}
	runs, err := s.lister.ListRuns(ctx, f)
	return len(runs), err
}

// SessionStarters implements SessionStarters.
func (s *Storage) SessionStarters(ctx context.Context, sessionID string) ([]string, error) {
	if err := s.can(StoreSessionStarters); err != nil {
		return nil, err
	}
	return s.starters.SessionStarters(ctx, sessionID)
}

// DeleteMessages implements MessageDeleter.
func (s *Storage) DeleteMessages(ctx context.Context, sessionID string, ids []string) (int, error) {
	if err := s.can(StoreMessageDelete); err != nil {
		return 0, err
	}
	if err := s.mayUseSession(ctx, sessionID); err != nil {
		return 0, err
	}
	return s.deleter.DeleteMessages(ctx, sessionID, ids)
}

// CreateLoop implements LoopStore.
func (s *Storage) CreateLoop(ctx context.Context, l LoopRecord) error {
	if err := s.can(StoreLoops); err != nil {
		return err
	}
	return s.loops.CreateLoop(ctx, l)
}

// UpdateLoop implements LoopStore.
func (s *Storage) UpdateLoop(ctx context.Context, id string, u LoopUpdate) error {
	if err := s.can(StoreLoops); err != nil {
		return err
	}
	return s.loops.UpdateLoop(ctx, id, u)
}

// AddLoopIteration implements LoopStore.
func (s *Storage) AddLoopIteration(ctx context.Context, it LoopIteration) error {
	if err := s.can(StoreLoops); err != nil {
		return err
	}
	return s.loops.AddLoopIteration(ctx, it)
}

// GetLoop implements LoopStore; under the ownership rule a loop of a
// session the caller may not see is ErrLoopNotFound.
func (s *Storage) GetLoop(ctx context.Context, id string) (LoopDetail, error) {
	if err := s.can(StoreLoops); err != nil {
		return LoopDetail{}, err
	}
	d, err := s.loops.GetLoop(ctx, id)
	if err != nil {
		return d, err
	}
	if hidden, err := s.sessionHiddenFrom(ctx, d.Loop.SessionID); err != nil || hidden {
		if err == nil {
			err = &BreadError{Code: CodeLoopNotFound, Message: fmt.Sprintf("loop %q not found", id)}
		}
		return LoopDetail{}, err
	}
	return d, nil
}

// ListLoops implements LoopStore; under the ownership rule it lists the
// loops of the caller's sessions only.
func (s *Storage) ListLoops(ctx context.Context, f LoopFilter) ([]LoopRecord, error) {
	if err := s.can(StoreLoops); err != nil {
		return nil, err
	}
	if owner, all := s.sessionScope(ctx); !all {
		if owner == "" {
			return []LoopRecord{}, nil
		}
		f.Owner = owner
	}
	return s.loops.ListLoops(ctx, f)
}

// AppendCrumbs implements CrumbLog.
func (s *Storage) AppendCrumbs(ctx context.Context, entries []CrumbLogEntry) error {
	if err := s.can(StoreCrumbLog); err != nil {
		return err
	}
	return s.crumbs.AppendCrumbs(ctx, entries)
}

// GetCrumbs implements CrumbLog.
func (s *Storage) GetCrumbs(ctx context.Context, runID string, afterSeq int64, limit int) ([]CrumbLogEntry, error) {
	if err := s.can(StoreCrumbLog); err != nil {
		return nil, err
	}
	return s.crumbs.GetCrumbs(ctx, runID, afterSeq, limit)
}

// MaxCrumbSeq implements CrumbLog.
func (s *Storage) MaxCrumbSeq(ctx context.Context, runID string) (int64, error) {
	if err := s.can(StoreCrumbLog); err != nil {
		return 0, err
	}
	return s.crumbs.MaxCrumbSeq(ctx, runID)
}

// AppendsInline implements InlineCrumbLog: whether the crumb log writes at
// memory speed, as its AppendsInline reported when the Storage was built;
// false for a log without it, or no log.
func (s *Storage) AppendsInline() bool { return s.caps&StoreInlineCrumbLog != 0 }

// CreateTaskRun implements TaskRunStore.
func (s *Storage) CreateTaskRun(ctx context.Context, r TaskRunRecord) error {
	if err := s.can(StoreTaskRuns); err != nil {
		return err
	}
	return s.tasks.CreateTaskRun(ctx, r)
}

// FinishTaskRun implements TaskRunStore.
func (s *Storage) FinishTaskRun(ctx context.Context, id string, u TaskRunUpdate) error {
	if err := s.can(StoreTaskRuns); err != nil {
		return err
	}
	return s.tasks.FinishTaskRun(ctx, id, u)
}

// GetTaskRun implements TaskRunStore; under the ownership rule a task run
// of a session the caller may not see, or a standalone one (no session),
// is ErrTaskRunNotFound.
func (s *Storage) GetTaskRun(ctx context.Context, id string) (TaskRunRecord, error) {
	if err := s.can(StoreTaskRuns); err != nil {
		return TaskRunRecord{}, err
	}
	r, err := s.tasks.GetTaskRun(ctx, id)
	if err != nil {
		return r, err
	}
	if hidden, err := s.sessionHiddenFrom(ctx, r.SessionID); err != nil || hidden {
		if err == nil {
			err = &BreadError{Code: CodeTaskRunNotFound, Message: fmt.Sprintf("task run %q not found", id)}
		}
		return TaskRunRecord{}, err
	}
	return r, nil
}

// ListTaskRuns implements TaskRunStore; under the ownership rule it lists
// the task runs of the caller's sessions only.
func (s *Storage) ListTaskRuns(ctx context.Context, f TaskRunFilter) ([]TaskRunRecord, error) {
	if err := s.can(StoreTaskRuns); err != nil {
		return nil, err
	}
	if owner, all := s.sessionScope(ctx); !all {
		if owner == "" {
			return []TaskRunRecord{}, nil
		}
		f.Owner = owner
	}
	return s.tasks.ListTaskRuns(ctx, f)
}

// AddKnowledgeNode implements KnowledgeStore.
func (s *Storage) AddKnowledgeNode(ctx context.Context, n NewKnowledgeNode) (KnowledgeNode, error) {
	if err := s.can(StoreKnowledge); err != nil {
		return KnowledgeNode{}, err
	}
	return s.knowledge.AddKnowledgeNode(ctx, n)
}

// AddKnowledgeEdge implements KnowledgeStore.
func (s *Storage) AddKnowledgeEdge(ctx context.Context, e KnowledgeEdge) error {
	if err := s.can(StoreKnowledge); err != nil {
		return err
	}
	return s.knowledge.AddKnowledgeEdge(ctx, e)
}

// QueryKnowledge implements KnowledgeStore.
func (s *Storage) QueryKnowledge(ctx context.Context, q KnowledgeQuery) ([]KnowledgeNode, error) {
	if err := s.can(StoreKnowledge); err != nil {
		return nil, err
	}
	return s.knowledge.QueryKnowledge(ctx, q)
}

// ForgetKnowledge implements KnowledgeStore.
func (s *Storage) ForgetKnowledge(ctx context.Context, id string) (bool, error) {
	if err := s.can(StoreKnowledge); err != nil {
		return false, err
	}
	return s.knowledge.ForgetKnowledge(ctx, id)
}

// KnowledgeContext implements KnowledgeStore.
func (s *Storage) KnowledgeContext(ctx context.Context, agentID, sessionID string, limit int) ([]KnowledgeNode, error) {
	if err := s.can(StoreKnowledge); err != nil {
		return nil, err
	}
	return s.knowledge.KnowledgeContext(ctx, agentID, sessionID, limit)
}

// IngestDocument implements DocumentStore.
func (s *Storage) IngestDocument(ctx context.Context, d NewDocument) (DocumentRecord, error) {
	if err := s.can(StoreDocuments); err != nil {
		return DocumentRecord{}, err
	}
	return s.documents.IngestDocument(ctx, d)
}

// SearchDocuments implements DocumentStore.
func (s *Storage) SearchDocuments(ctx context.Context, q DocumentQuery) ([]DocumentRecord, error) {
	if err := s.can(StoreDocuments); err != nil {
		return nil, err
	}
	return s.documents.SearchDocuments(ctx, q)
}

// ReadDocument implements DocumentStore.
func (s *Storage) ReadDocument(ctx context.Context, agentID, id string) (Document, error) {
	if err := s.can(StoreDocuments); err != nil {
		return Document{}, err
	}
	return s.documents.ReadDocument(ctx, agentID, id)
}
