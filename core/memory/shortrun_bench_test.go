package memory

import (
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

// BenchmarkShortRunWrites is what the memory store does for a short run
// as the engine writes it (the session, its user message and the running
// record in one write; its start, one aggregated delta and its end logged
// one entry at a time; the assistant's message and the finished record in
// one write), once the store keeps as many runs and sessions as its
// default retention, so every run also drops the oldest.
func BenchmarkShortRunWrites(b *testing.B) {
	ctx := b.Context()
	s := New()
	user := []byte(`[{"type":"text","text":"hi"}]`)
	answer := []byte(`[{"type":"text","text":"tok0 "}]`)
	write := func(i int) {
		run, sess := fmt.Sprintf("run-%08d", i), fmt.Sprintf("sess-%08d", i)
		rec := core.RunRecord{ID: run, AgentID: "a", SessionID: sess, Status: core.RunRunning, CreatedAt: int64(i)}
		if _, err := s.WriteRun(ctx, core.RunWrite{
			Session: &core.NewSession{ID: sess, AgentID: "a"}, SessionID: sess,
			Messages: []core.SessionMessage{{SessionID: sess, Role: core.RoleUser, Content: user}},
			Run:      &rec,
		}); err != nil {
			b.Fatal(err)
		}
		base := core.CrumbBase{AgentID: "a", RunID: run, SessionID: sess}
		for seq, c := range []core.Crumb{&core.AgentRunStart{CrumbBase: base}, &core.TextDelta{CrumbBase: base, Delta: "tok0 "}, &core.AgentRunEnd{CrumbBase: base}} {
			e := []core.CrumbLogEntry{{RunID: run, Seq: int64(seq + 1), SessionID: sess, AgentID: "a", Type: "t", Crumb: c}}
			if err := s.AppendCrumbs(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
		end := rec
		end.Status = core.RunCompleted
		if _, err := s.WriteRun(ctx, core.RunWrite{
			SessionID: sess,
			Messages:  []core.SessionMessage{{SessionID: sess, Role: core.RoleAssistant, Content: answer}},
			Run:       &end,
		}); err != nil {
			b.Fatal(err)
		}
	}
	warm := max(DefaultRetainRuns, DefaultRetainSessions) + DefaultRetainSessions/16 + 1
	for i := range warm {
		write(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		write(warm + i)
	}
}
