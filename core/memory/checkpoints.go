package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/breadai/bread/core"
)

// storedCheckpoint is a saved checkpoint. rec is never changed: saving again
// replaces the whole storedCheckpoint.
type storedCheckpoint struct {
	rec core.CheckpointRecord
	seq uint64
}

// SaveCheckpoint implements core.CheckpointStore. A replaced checkpoint
// keeps its place among equal CreatedAt values.
func (s *Store) SaveCheckpoint(ctx context.Context, cp core.CheckpointRecord) error {
	if cp.ID == "" {
		return invalid("a checkpoint needs an id")
	}
	rec := cloneCheckpoint(cp)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkFence(ctx); err != nil {
		return err
	}
	s.putCheckpoint(rec)
	return nil
}

// putCheckpoint stores rec. The write lock must be held.
func (s *Store) putCheckpoint(rec core.CheckpointRecord) {
	seq := uint64(0)
	if old, ok := s.checkpoints[rec.ID]; ok {
		seq = old.seq
	} else {
		seq = s.next()
	}
	s.checkpoints[rec.ID] = &storedCheckpoint{rec: rec, seq: seq}
}

// GetCheckpoint implements core.CheckpointStore.
func (s *Store) GetCheckpoint(ctx context.Context, id string) (core.CheckpointRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return core.CheckpointRecord{}, err
	}
	cp, ok := s.checkpoints[id]
	s.mu.RUnlock()
	if !ok {
		return core.CheckpointRecord{}, notFound(core.ErrCheckpointNotFound, "checkpoint %q not found", id)
	}
	return cloneCheckpoint(cp.rec), nil
}

// DeleteCheckpoint implements core.CheckpointStore: under the write lock,
// exactly one of concurrent callers finds the record.
func (s *Store) DeleteCheckpoint(ctx context.Context, id string) (core.CheckpointRecord, error) {
	if err := s.lock(ctx); err != nil {
		return core.CheckpointRecord{}, err
	}
	cp, ok := s.checkpoints[id]
	delete(s.checkpoints, id)
	s.mu.Unlock()
	if !ok {
		return core.CheckpointRecord{}, notFound(core.ErrCheckpointNotFound, "checkpoint %q not found", id)
	}
	// A reader that found cp before the delete may still be copying it.
	return cloneCheckpoint(cp.rec), nil
}

// ListCheckpoints implements core.CheckpointStore.
func (s *Store) ListCheckpoints(ctx context.Context) ([]core.CheckpointRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	all := make([]*storedCheckpoint, 0, len(s.checkpoints))
	for _, cp := range s.checkpoints {
		all = append(all, cp)
	}
	s.mu.RUnlock()
	slices.SortFunc(all, func(a, b *storedCheckpoint) int {
		return cmp.Or(cmp.Compare(a.rec.CreatedAt, b.rec.CreatedAt), cmp.Compare(a.seq, b.seq))
	})
	out := make([]core.CheckpointRecord, len(all))
	for i, cp := range all {
		out[i] = cloneCheckpoint(cp.rec)
	}
	return out, nil
}

// SuspendRun implements core.CheckpointStore. Messages and checkpoints
// are written under one hold of the write lock, after every check passed.
func (s *Store) SuspendRun(ctx context.Context, sessionID string, msgs []core.SessionMessage, cps ...core.CheckpointRecord) error {
	recs := make([]core.CheckpointRecord, len(cps))
	for i, cp := range cps {
		if cp.ID == "" {
			return invalid("a checkpoint needs an id")
		}
		if cp.SessionID != sessionID {
			return invalid("checkpoint %q names session %q, not the suspending run's %q", cp.ID, cp.SessionID, sessionID)
		}
		recs[i] = cloneCheckpoint(cp)
	}
	prepared := make([]core.SessionMessage, len(msgs))
	for i, m := range msgs {
		prepared[i] = s.prepareMessage(sessionID, m)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkFence(ctx); err != nil {
		return err
	}
	sess, ok := s.sessions[sessionID]
	if !ok {
		return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	s.appendMessages(sess, s.nowMillis(), prepared...)
	for _, rec := range recs {
		s.putCheckpoint(rec)
	}
	return nil
}

// cloneCheckpoint deep-copies a checkpoint, so neither the caller nor the
// store can reach the other's memory.
func cloneCheckpoint(cp core.CheckpointRecord) core.CheckpointRecord {
	cp.Schema = slices.Clone(cp.Schema)
	cp.Parent = cloneParent(cp.Parent)
	cp.Pending = slices.Clone(cp.Pending)
	cp.Meta = maps.Clone(cp.Meta)
	if cp.Set != nil {
		set := *cp.Set
		set.CheckpointIDs = slices.Clone(set.CheckpointIDs)
		cp.Set = &set
	}
	return cp
}

func cloneParent(p *core.CheckpointParent) *core.CheckpointParent {
	if p == nil {
		return nil
	}
	c := *p
	c.RemainingSteps = cloneSteps(p.RemainingSteps)
	if p.Map != nil {
		m := *p.Map
		m.SettledOutputs = cloneRaws(m.SettledOutputs)
		m.RemainingItems = cloneRaws(m.RemainingItems)
		c.Map = &m
	}
	if p.Parallel != nil {
		par := *p.Parallel
		c.Parallel = &par
	}
	if p.Loop != nil {
		l := *p.Loop
		l.Input = slices.Clone(l.Input)
		c.Loop = &l
	}
	c.Outer = cloneParent(p.Outer)
	return &c
}

func cloneSteps(steps []core.PipelineStep) []core.PipelineStep {
	if steps == nil {
		return nil
	}
	out := make([]core.PipelineStep, len(steps))
	for i, st := range steps {
		st.Steps = cloneSteps(st.Steps)
		st.Routes = maps.Clone(st.Routes)
		out[i] = st
	}
	return out
}

// ClaimCheckpoint implements core.CheckpointStore.
func (s *Store) ClaimCheckpoint(ctx context.Context, id, claimant string, now, until int64) (core.CheckpointRecord, error) {
	if err := s.lock(ctx); err != nil {
		return core.CheckpointRecord{}, err
	}
	defer s.mu.Unlock()
	sc, ok := s.checkpoints[id]
	if !ok {
		return core.CheckpointRecord{}, &core.BreadError{Code: core.CodeCheckpointNotFound, Message: fmt.Sprintf("checkpoint %q not found", id)}
	}
	if sc.rec.ClaimedBy != "" && sc.rec.ClaimedUntil >= now {
		return core.CheckpointRecord{}, &core.BreadError{Code: core.CodeCheckpointClaimed, Message: fmt.Sprintf("checkpoint %q is being resumed; retry once that resume ends or its claim lapses", id)}
	}
	// Records are never changed in place: readers copy them after
	// unlocking, so a claim stores a new record.
	claimed := &storedCheckpoint{rec: cloneCheckpoint(sc.rec), seq: sc.seq}
	claimed.rec.ClaimedBy, claimed.rec.ClaimedUntil = claimant, until
	s.checkpoints[id] = claimed
	return cloneCheckpoint(claimed.rec), nil
}

// RenewCheckpointClaims implements core.CheckpointStore.
func (s *Store) RenewCheckpointClaims(ctx context.Context, claimant string, until int64) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for id, sc := range s.checkpoints {
		if sc.rec.ClaimedBy == claimant {
			renewed := &storedCheckpoint{rec: cloneCheckpoint(sc.rec), seq: sc.seq}
			renewed.rec.ClaimedUntil = until
			s.checkpoints[id] = renewed
			n++
		}
	}
	return n, nil
}
