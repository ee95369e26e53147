package bunstoretest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

// rawPayload has everything a reformatting store would change: whitespace,
// key order, a duplicate key, a number past float64 and escapes.
var rawPayload = json.RawMessage("{ \"z\" : 1.50,\n\t\"a\":[ 12345678901234567890 , 1e3 ], \"a\": \"dup\", \"s\": \"\\u00e9\\n\" }")

// Store is what PayloadBytesExact writes to and reads from.
type Store interface {
	core.BreadStore
	core.LoopStore
	core.TaskRunStore
}

// PayloadBytesExact checks what storetest compares after compaction: every
// json.RawMessage comes back from s, a migrated and empty store, with the
// very bytes that went in.
func PayloadBytesExact(t *testing.T, s Store) {
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, got json.RawMessage) {
		t.Helper()
		if !bytes.Equal(got, rawPayload) {
			t.Errorf("%s changed:\nwant %s\n got %s", what, rawPayload, got)
		}
	}
	if err := s.AddMessage(ctx, "s", core.SessionMessage{Role: core.RoleTool, Content: rawPayload}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.GetMessages(ctx, "s")
	if err != nil || len(msgs) != 1 {
		t.Fatalf("GetMessages: %v, %v", msgs, err)
	}
	check("message content", msgs[0].Content)

	cp := core.CheckpointRecord{ID: "cp", SessionID: "s", Schema: rawPayload,
		Parent: &core.CheckpointParent{Kind: core.ParentPipeline, Map: &core.MapProgress{SettledOutputs: []json.RawMessage{rawPayload}}}}
	if err := s.SaveCheckpoint(ctx, cp); err != nil {
		t.Fatal(err)
	}
	gotCP, err := s.DeleteCheckpoint(ctx, "cp")
	if err != nil {
		t.Fatal(err)
	}
	check("checkpoint schema", gotCP.Schema)
	// A RawMessage nested in Parent goes through json.Marshal, which
	// compacts it: only whitespace may change, never keys or numbers.
	var compact bytes.Buffer
	_ = json.Compact(&compact, rawPayload)
	if got := gotCP.Parent.Map.SettledOutputs[0]; !bytes.Equal(got, compact.Bytes()) {
		t.Errorf("checkpoint map output changed beyond whitespace:\nwant %s\n got %s", compact.Bytes(), got)
	}

	if err := s.CreateLoop(ctx, core.LoopRecord{ID: "l", Result: rawPayload}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddLoopIteration(ctx, core.LoopIteration{ID: "i", LoopID: "l", Index: 1, Input: rawPayload, Output: rawPayload}); err != nil {
		t.Fatal(err)
	}
	loop, err := s.GetLoop(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	check("loop result", loop.Loop.Result)
	check("iteration input", loop.Iterations[0].Input)
	check("iteration output", loop.Iterations[0].Output)

	if err := s.CreateTaskRun(ctx, core.TaskRunRecord{ID: "t", TaskID: "task", Input: rawPayload}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishTaskRun(ctx, "t", core.TaskRunUpdate{Output: rawPayload}); err != nil {
		t.Fatal(err)
	}
	run, err := s.GetTaskRun(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	check("task input", run.Input)
	check("task output", run.Output)
}
