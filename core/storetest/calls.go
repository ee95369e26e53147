package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// call is one store method invoked with a given context, for the cases that
// check every method the same way (cancelled context, closed store).
type call struct {
	name string
	do   func(ctx context.Context) error
}

// seeded names the generated ids of the records seedEverything wrote.
type seeded struct {
	node1, node2, document string
}

// seedEverything writes one record of every kind the store supports, so the
// calls of everyCall address things that exist.
func seedEverything(t *testing.T, s core.BreadStore) seeded {
	t.Helper()
	var ids seeded
	ctx := t.Context()
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, s.AddMessage(ctx, "s", textMessage(core.RoleUser, "hi", baseTime)), "AddMessage")
	noErr(t, s.SaveCheckpoint(ctx, checkpoint("cp", "s", baseTime)), "SaveCheckpoint")
	if ls, ok := optional[core.LoopStore](s); ok {
		noErr(t, ls.CreateLoop(ctx, loop("loop", "s", baseTime)), "CreateLoop")
	}
	if rs, ok := optional[core.RunStore](s); ok {
		noErr(t, rs.PutRun(ctx, runRecord("run", "s", "a", core.RunRunning, baseTime)), "PutRun")
	}
	if cl, ok := optional[core.CrumbLog](s); ok {
		noErr(t, cl.AppendCrumbs(ctx, textEntries("run", "s", 1, 3)), "AppendCrumbs")
	}
	if tr, ok := optional[core.TaskRunStore](s); ok {
		noErr(t, tr.CreateTaskRun(ctx, taskRun("tr", "extract", baseTime)), "CreateTaskRun")
	}
	if es, ok := optional[core.EvalRunStore](s); ok {
		noErr(t, es.SaveEvalRun(ctx, evalRun("ev", "a", baseTime)), "SaveEvalRun")
	}
	if ks, ok := optional[core.KnowledgeStore](s); ok {
		ids.node1 = addNode(t, ks, "a", "s", "one", nil).ID
		ids.node2 = addNode(t, ks, "a", "s", "two", nil).ID
	}
	if ds, ok := optional[core.DocumentStore](s); ok {
		ids.document = ingest(t, ds, core.NewDocument{AgentID: "a", Title: "t", Content: "c"}).ID
	}
	return ids
}

// everyCall lists a call of every method of the store, BreadStore's and the
// optional capabilities it implements, against the records seedEverything
// wrote.
func everyCall(s core.BreadStore, seed seeded) []call {
	calls := []call{
		{"CreateSession", func(ctx context.Context) error { _, err := s.CreateSession(ctx, core.NewSession{}); return err }},
		{"GetSession", func(ctx context.Context) error { _, err := s.GetSession(ctx, "s"); return err }},
		{"ListSessions", func(ctx context.Context) error { _, err := s.ListSessions(ctx, core.SessionFilter{}); return err }},
		{"DeleteSession", func(ctx context.Context) error { return s.DeleteSession(ctx, "s") }},
		{"CleanupSessions", func(ctx context.Context) error {
			_, err := s.CleanupSessions(ctx, core.CleanupOptions{OlderThan: time.Hour})
			return err
		}},
		{"GetMessages", func(ctx context.Context) error { _, err := s.GetMessages(ctx, "s"); return err }},
		{"AddMessage", func(ctx context.Context) error {
			return s.AddMessage(ctx, "s", textMessage(core.RoleUser, "x", baseTime))
		}},
		{"SaveCheckpoint", func(ctx context.Context) error { return s.SaveCheckpoint(ctx, checkpoint("cp-new", "s", baseTime)) }},
		{"GetCheckpoint", func(ctx context.Context) error { _, err := s.GetCheckpoint(ctx, "cp"); return err }},
		{"DeleteCheckpoint", func(ctx context.Context) error { _, err := s.DeleteCheckpoint(ctx, "cp"); return err }},
		{"ListCheckpoints", func(ctx context.Context) error { _, err := s.ListCheckpoints(ctx); return err }},
		{"ClaimCheckpoint", func(ctx context.Context) error {
			_, err := s.ClaimCheckpoint(ctx, "cp", "a", baseTime, baseTime+1)
			return err
		}},
		{"RenewCheckpointClaims", func(ctx context.Context) error { _, err := s.RenewCheckpointClaims(ctx, "a", baseTime+1); return err }},
		{"SettleJoin", func(ctx context.Context) error {
			_, _, err := s.SettleJoin(ctx, "join", 2, 0, json.RawMessage(`1`))
			return err
		}},
		{"SuspendRun", func(ctx context.Context) error {
			return s.SuspendRun(ctx, "s", turnMessages(baseTime)[:1], checkpoint("cp-suspend", "s", baseTime))
		}},
	}
	if rs, ok := optional[core.RunStore](s); ok {
		calls = append(calls,
			call{"PutRun", func(ctx context.Context) error {
				return rs.PutRun(ctx, runRecord("run-new", "s", "a", core.RunRunning, baseTime))
			}},
			call{"GetRun", func(ctx context.Context) error { _, err := rs.GetRun(ctx, "run"); return err }},
			call{"RenewRunLeases", func(ctx context.Context) error {
				_, err := rs.RenewRunLeases(ctx, "a", baseTime+1)
				return err
			}},
			call{"ExpiredRuns", func(ctx context.Context) error { _, err := rs.ExpiredRuns(ctx, baseTime, 0); return err }},
			call{"LoseRun", func(ctx context.Context) error { _, err := rs.LoseRun(ctx, "run", baseTime+10); return err }},
			call{"EndRun", func(ctx context.Context) error {
				_, err := rs.EndRun(ctx, runRecord("run", "s", "", core.RunCompleted, 0), "a")
				return err
			}},
		)
	}
	if ls, ok := optional[core.LoopStore](s); ok {
		calls = append(calls,
			call{"CreateLoop", func(ctx context.Context) error { return ls.CreateLoop(ctx, loop("loop-new", "s", baseTime)) }},
			call{"UpdateLoop", func(ctx context.Context) error {
				return ls.UpdateLoop(ctx, "loop", core.LoopUpdate{Status: core.LoopFailed})
			}},
			call{"AddLoopIteration", func(ctx context.Context) error {
				return ls.AddLoopIteration(ctx, core.LoopIteration{ID: "it", LoopID: "loop", Index: 1, Input: json.RawMessage(`1`), Output: json.RawMessage(`2`)})
			}},
			call{"GetLoop", func(ctx context.Context) error { _, err := ls.GetLoop(ctx, "loop"); return err }},
			call{"ListLoops", func(ctx context.Context) error { _, err := ls.ListLoops(ctx, core.LoopFilter{}); return err }},
		)
	}
	if cl, ok := optional[core.CrumbLog](s); ok {
		calls = append(calls,
			call{"AppendCrumbs", func(ctx context.Context) error { return cl.AppendCrumbs(ctx, textEntries("run", "s", 4, 4)) }},
			call{"GetCrumbs", func(ctx context.Context) error { _, err := cl.GetCrumbs(ctx, "run", 0, 0); return err }},
			call{"MaxCrumbSeq", func(ctx context.Context) error { _, err := cl.MaxCrumbSeq(ctx, "run"); return err }},
		)
	}
	if tr, ok := optional[core.TaskRunStore](s); ok {
		calls = append(calls,
			call{"CreateTaskRun", func(ctx context.Context) error { return tr.CreateTaskRun(ctx, taskRun("tr-new", "x", baseTime)) }},
			call{"FinishTaskRun", func(ctx context.Context) error {
				return tr.FinishTaskRun(ctx, "tr", core.TaskRunUpdate{Status: core.TaskCompleted})
			}},
			call{"GetTaskRun", func(ctx context.Context) error { _, err := tr.GetTaskRun(ctx, "tr"); return err }},
			call{"ListTaskRuns", func(ctx context.Context) error { _, err := tr.ListTaskRuns(ctx, core.TaskRunFilter{}); return err }},
		)
	}
	if es, ok := optional[core.EvalRunStore](s); ok {
		calls = append(calls,
			call{"SaveEvalRun", func(ctx context.Context) error { return es.SaveEvalRun(ctx, evalRun("ev-new", "a", baseTime)) }},
			call{"GetEvalRun", func(ctx context.Context) error { _, err := es.GetEvalRun(ctx, "ev"); return err }},
			call{"ListEvalRuns", func(ctx context.Context) error { _, err := es.ListEvalRuns(ctx, core.EvalRunFilter{}); return err }},
		)
	}
	if ks, ok := optional[core.KnowledgeStore](s); ok {
		calls = append(calls,
			call{"AddKnowledgeNode", func(ctx context.Context) error {
				_, err := ks.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: "a", SessionID: "s", Label: "x"})
				return err
			}},
			call{"AddKnowledgeEdge", func(ctx context.Context) error {
				return ks.AddKnowledgeEdge(ctx, core.KnowledgeEdge{FromID: seed.node1, ToID: seed.node2, Relation: "r"})
			}},
			call{"QueryKnowledge", func(ctx context.Context) error {
				_, err := ks.QueryKnowledge(ctx, core.KnowledgeQuery{AgentID: "a", Query: "x"})
				return err
			}},
			call{"ForgetKnowledge", func(ctx context.Context) error { _, err := ks.ForgetKnowledge(ctx, seed.node1); return err }},
			call{"KnowledgeContext", func(ctx context.Context) error { _, err := ks.KnowledgeContext(ctx, "a", "s", 0); return err }},
		)
	}
	if ds, ok := optional[core.DocumentStore](s); ok {
		calls = append(calls,
			call{"IngestDocument", func(ctx context.Context) error {
				_, err := ds.IngestDocument(ctx, core.NewDocument{AgentID: "a", Title: "t", Content: "c"})
				return err
			}},
			call{"SearchDocuments", func(ctx context.Context) error {
				_, err := ds.SearchDocuments(ctx, core.DocumentQuery{AgentID: "a", Query: "c"})
				return err
			}},
			call{"ReadDocument", func(ctx context.Context) error { _, err := ds.ReadDocument(ctx, "a", seed.document); return err }},
		)
	}
	return calls
}
