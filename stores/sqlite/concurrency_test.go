package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/sqlite"
)

// TestFiftyConcurrentRuns writes what 50 concurrent runs write (a session,
// a turn's messages, the crumb log, a suspension) into one file through two
// stores, as two processes would, with enough connections that every run
// reaches SQLite at once. Not one write may fail: IMMEDIATE transactions and
// the busy timeout make writers queue instead of surfacing SQLITE_BUSY.
func TestFiftyConcurrentRuns(t *testing.T) {
	const runs, messages, crumbs = 50, 4, 40
	path := filepath.Join(t.TempDir(), "runs.db")
	stores := []*sqlite.Store{
		openStore(t, sqlite.Options{Path: path, MaxOpenConns: runs}),
		openStore(t, sqlite.Options{Path: path, MaxOpenConns: runs}),
	}
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for r := range runs {
		wg.Go(func() {
			if err := oneRun(t.Context(), stores[r%2], r, messages, crumbs); err != nil {
				errs <- fmt.Errorf("run %d: %w", r, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := stores[0]
	sessions, err := s.ListSessions(t.Context(), core.SessionFilter{})
	if err != nil || len(sessions) != runs {
		t.Fatalf("ListSessions: %d sessions, %v; want %d", len(sessions), err, runs)
	}
	cps, err := s.ListCheckpoints(t.Context())
	if err != nil || len(cps) != runs {
		t.Fatalf("ListCheckpoints: %d checkpoints, %v; want %d", len(cps), err, runs)
	}
	for r := range runs {
		msgs, err := s.GetMessages(t.Context(), fmt.Sprintf("session-%d", r))
		if err != nil || len(msgs) != messages+2 {
			t.Fatalf("session %d: %d messages, %v; want %d", r, len(msgs), err, messages+2)
		}
		max, err := s.MaxCrumbSeq(t.Context(), fmt.Sprintf("run-%d", r))
		if err != nil || max != crumbs {
			t.Fatalf("run %d: max seq %d, %v; want %d", r, max, err, crumbs)
		}
	}
}

func oneRun(ctx context.Context, s *sqlite.Store, r, messages, crumbs int) error {
	sessionID, runID := fmt.Sprintf("session-%d", r), fmt.Sprintf("run-%d", r)
	if _, err := s.CreateSession(ctx, core.NewSession{ID: sessionID, AgentID: "agent"}); err != nil {
		return fmt.Errorf("CreateSession: %w", err)
	}
	for i := range messages {
		m := core.SessionMessage{Role: core.RoleUser, Content: json.RawMessage(fmt.Sprintf(`"message %d"`, i))}
		if err := s.AddMessage(ctx, sessionID, m); err != nil {
			return fmt.Errorf("AddMessage: %w", err)
		}
	}
	// The choke point flushes small batches as the run goes.
	for seq := 1; seq <= crumbs; seq += 4 {
		var batch []core.CrumbLogEntry
		for i := seq; i < seq+4 && i <= crumbs; i++ {
			batch = append(batch, core.CrumbLogEntry{
				RunID: runID, Seq: int64(i), SessionID: sessionID, AgentID: "agent", Type: core.TypeToolCall,
				Crumb: &core.ToolCall{CrumbBase: core.CrumbBase{AgentID: "agent", RunID: runID, SessionID: sessionID, Seq: int64(i)}, ToolCallID: "tc", ToolName: "lookup"},
			})
		}
		if err := s.AppendCrumbs(ctx, batch); err != nil {
			return fmt.Errorf("AppendCrumbs: %w", err)
		}
	}
	turn := []core.SessionMessage{
		{Role: core.RoleAssistant, Content: json.RawMessage(`[{"type":"tool-call","toolCallId":"tc"}]`)},
		{Role: core.RoleTool, Content: json.RawMessage(`[]`)},
	}
	cp := core.CheckpointRecord{ID: "cp-" + runID, AgentID: "agent", RunID: runID, SessionID: sessionID, ToolName: "ask", ToolCallID: "tc", Schema: json.RawMessage(`{}`), CreatedAt: core.NowMillis()}
	if err := s.SuspendRun(ctx, sessionID, turn, cp); err != nil {
		return fmt.Errorf("SuspendRun: %w", err)
	}
	return nil
}
