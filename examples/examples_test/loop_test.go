package examplestest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/sqlite"
)

func TestLoop(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "loop")
	final := transcriptText(t, filepath.Join(dir, "transcripts/editor.jsonl"), 3)
	revision := transcriptText(t, filepath.Join(dir, "transcripts/drafter.jsonl"), 1)
	if final != revision {
		t.Fatalf("the editor's answer should be the drafter's revision:\n%q\n%q", final, revision)
	}

	r := mustBread(t, invocation{dir: dir, args: []string{"invoke", "editor", "why sourdough rises", "--trace"}})
	if strings.TrimSpace(r.stdout) != final {
		t.Errorf("stdout %q, want the final paragraph %q", r.stdout, final)
	}
	// The trace shows the loop's course: started, iterated once with the
	// editor's feedback, finished after two iterations.
	for _, want := range []string{
		`> core_start_loop({"pipeline":["drafter","critic"]`,
		`< core_start_loop {"canIterate":true,"iteration":1,`,
		`> core_iterate_loop({"feedback":`,
		`< core_iterate_loop {"canIterate":true,"iteration":2,`,
		`< core_finish_loop {"iterations":2,`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("trace lacks %q: %s", want, r)
		}
	}

	// The loop and its iterations are stored in the project's SQLite file.
	store, err := sqlite.New(sqlite.Options{Path: filepath.Join(dir, "bread.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	loops, err := store.ListLoops(context.Background(), core.LoopFilter{AgentID: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(loops) != 1 || loops[0].Status != core.LoopCompleted || loops[0].Iterations != 2 || strings.Join(loops[0].Pipeline, ",") != "drafter,critic" {
		t.Errorf("stored loops %+v, want one completed drafter,critic loop of two iterations", loops)
	}
}
