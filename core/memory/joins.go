package memory

import (
	"context"
	"encoding/json"
	"slices"
)

// join is one composition's settlement state.
type join struct {
	outputs []json.RawMessage
	settled []bool
	open    int // slots not settled yet
	// completedBy is the slot whose settlement completed the join, -1
	// before that.
	completedBy int
}

// SettleJoin implements core.CheckpointStore.
func (s *Store) SettleJoin(ctx context.Context, joinID string, slots, slot int, output json.RawMessage) ([]json.RawMessage, bool, error) {
	if slots <= 0 || slot < 0 || slot >= slots {
		return nil, false, invalid("join slot %d is out of range for %d slots", slot, slots)
	}
	if err := s.lock(ctx); err != nil {
		return nil, false, err
	}
	defer s.mu.Unlock()
	j, ok := s.joins[joinID]
	if !ok {
		j = &join{outputs: make([]json.RawMessage, slots), settled: make([]bool, slots), open: slots, completedBy: -1}
		s.joins[joinID] = j
	}
	if slot >= len(j.settled) {
		return nil, false, invalid("join %s has %d slots, not %d", joinID, len(j.settled), slots)
	}
	if j.settled[slot] {
		if j.completedBy == slot {
			return cloneRaws(j.outputs), true, nil
		}
		return nil, false, nil
	}
	j.settled[slot], j.outputs[slot] = true, slices.Clone(output)
	j.open--
	if j.open > 0 {
		return nil, false, nil
	}
	j.completedBy = slot
	return cloneRaws(j.outputs), true, nil
}
