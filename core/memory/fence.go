package memory

import (
	"context"

	"github.com/breadai/bread/core"
)

// checkFence refuses a write made under a core.RunFence its run's record
// no longer holds. Called with the write lock held, so the check and the
// write that follows are one step to every other caller (LoseRun among
// them).
func (s *Store) checkFence(ctx context.Context) error {
	f, ok := core.RunFenceFrom(ctx)
	if !ok {
		return nil
	}
	r, exists := s.runRecords[f.RunID]
	stored := ""
	if exists {
		stored = r.Fence
	}
	if f.Admits(stored, exists) {
		return nil
	}
	return f.Taken()
}
