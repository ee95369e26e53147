package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// integrityProject is a SQLite project with a short run lease: a slow agent
// that is killed mid-run, and a publisher that asks a human and whose
// continuation takes a few seconds, so a resume can be killed too.
func integrityProject(t *testing.T, store string) string {
	return project(t, map[string]string{
		"bread.yaml": store + `
runs: {lease: 1s}
providers: {replay: {mode: conversation}}
`,
		"agents/slow/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\n",
		"t/slow.jsonl": `{"call":0,"type":"text-delta","delta":"working","delayMs":10}
{"call":0,"type":"text-delta","delta":" forever","delayMs":600000}
{"call":0,"type":"finish","finishReason":"stop"}
`,
		"agents/publisher/agent.yaml":         "model: {provider: replay, model: t/publisher.jsonl}\n",
		"agents/publisher/tools/confirm.yaml": "type: human\nprompt: Publish?\n",
		"t/publisher.jsonl": `{"call":0,"type":"tool-call","toolCallId":"h1","toolName":"human_confirm","input":{"post":"hello"}}
{"call":0,"type":"finish","finishReason":"tool-calls"}
{"call":1,"type":"text-delta","delta":"Published ","delayMs":2500}
{"call":1,"type":"text-delta","delta":"everywhere."}
{"call":1,"type":"finish","finishReason":"stop"}
`,
	})
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %s: %v", url, b, err)
		}
	}
	return resp.StatusCode
}

// kill9 stops a replica the way a crash would: SIGKILL, no shutdown.
func kill9(t *testing.T, r *replicaProc) {
	t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = r.cmd.Process.Wait()
}

// TestKillNineOnSQLite is issue 13's acceptance over the built binary: a run
// killed mid-way ends for its tails with RUN_LOST after a restart and reads
// as lost; a suspended run survives the restart and resumes exactly once;
// a resume killed mid-way is refused while its claim is live, then retried
// and completed.
func TestKillNineOnSQLite(t *testing.T) {
	dir := integrityProject(t, "store: {type: sqlite, path: bread.db}")

	t.Run("a run killed mid-way ends with RUN_LOST", func(t *testing.T) {
		a := startReplica(t, dir, nil)
		run := open(t, "POST", a.base+"/agents/slow/run", `{"input":"go"}`)
		got := run.until(core.TypeTextDelta)
		runID := got[0].RunID
		kill9(t, a)

		b := startReplica(t, dir, nil)
		done := make(chan []core.Frame, 1)
		go func() { done <- open(t, "GET", b.base+"/runs/"+runID+"/stream", "").until(core.TypeAgentError) }()
		select {
		case fs := <-done:
			end := fs[len(fs)-1].Crumb.(*core.AgentError)
			if end.Error.Code != core.CodeRunLost || fs[0].Crumb.CrumbType() != core.TypeAgentRunStart {
				t.Fatalf("the tail: %s ending %+v", kinds(fs), end.Error)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the tail of the killed run did not end")
		}
		var rec struct{ Status string }
		if code := getJSON(t, b.base+"/runs/"+runID, &rec); code != 200 || rec.Status != "lost" {
			t.Fatalf("GET /runs/%s = %d %+v", runID, code, rec)
		}
		kill9(t, b)
	})

	t.Run("a suspended run survives the restart and resumes once", func(t *testing.T) {
		a := startReplica(t, dir, nil)
		fs := open(t, "POST", a.base+"/agents/publisher/run", `{"input":"publish"}`).until(core.TypeHumanRequired)
		hr := fs[len(fs)-1].Crumb.(*core.HumanRequired)
		kill9(t, a)

		b := startReplica(t, dir, nil)
		var rec struct {
			Status     string
			Checkpoint *struct{ ID string }
		}
		if code := getJSON(t, b.base+"/runs/"+hr.RunID, &rec); code != 200 || rec.Status != "suspended" || rec.Checkpoint == nil || rec.Checkpoint.ID != hr.CheckpointID {
			t.Fatalf("the suspended run after the restart: %d %+v", code, rec)
		}
		cont := open(t, "POST", b.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).until(core.TypeAgentRunEnd)
		if out, _ := json.Marshal(cont[len(cont)-1].Crumb.(*core.AgentRunEnd).Output); string(out) != `"Published everywhere."` {
			t.Fatalf("the resumed run: %s", out)
		}
		again := open(t, "POST", b.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).until(core.TypeAgentError)
		if code := again[len(again)-1].Crumb.(*core.AgentError).Error.Code; code != core.CodeCheckpointNotFound {
			t.Fatalf("a second resume: %s", code)
		}
		kill9(t, b)
	})

	t.Run("a resume killed mid-way waits for its retry, which ends it once", func(t *testing.T) {
		a := startReplica(t, dir, nil)
		fs := open(t, "POST", a.base+"/agents/publisher/run", `{"input":"publish"}`).until(core.TypeHumanRequired)
		hr := fs[len(fs)-1].Crumb.(*core.HumanRequired)
		// The continuation's model call takes seconds: kill during it.
		open(t, "POST", a.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).until(core.TypeHumanResumed)
		kill9(t, a)

		b := startReplica(t, dir, nil)
		// A tail opened now waits through the lapse for the retry's end.
		tail := make(chan []core.Frame, 1)
		go func() {
			var out []core.Frame
			f := open(t, "GET", b.base+"/runs/"+hr.RunID+"/stream", "")
			for {
				fr, ok := f.next()
				if !ok {
					break
				}
				out = append(out, fr)
			}
			tail <- out
		}()
		// Once the lease lapses the run waits for a retry: suspended on its
		// checkpoint with RUN_LOST, not ended.
		var rec struct {
			Status     string
			ErrorCode  string
			Checkpoint *struct{ ID string }
		}
		deadline := time.Now().Add(20 * time.Second)
		for getJSON(t, b.base+"/runs/"+hr.RunID, &rec); rec.ErrorCode != core.CodeRunLost; getJSON(t, b.base+"/runs/"+hr.RunID, &rec) {
			if time.Now().After(deadline) {
				t.Fatalf("the lost resume's record: %+v", rec)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if rec.Status != "suspended" || rec.Checkpoint == nil || rec.Checkpoint.ID != hr.CheckpointID {
			t.Fatalf("the lost resume's record: %+v; want suspended on %s", rec, hr.CheckpointID)
		}
		var retried []core.Frame
		for {
			retry := open(t, "POST", b.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`)
			f, ok := retry.next()
			if !ok {
				t.Fatal("no answer to the retry")
			}
			if ae, isErr := f.Crumb.(*core.AgentError); isErr && ae.Error.Code == core.CodeCheckpointClaimed && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond) // the dead claim lapses with the lease, give or take a renewal
				continue
			}
			if f.Crumb.CrumbType() != core.TypeHumanResumed {
				t.Fatalf("the retried resume starts with %s", f.Crumb.CrumbType())
			}
			retried = retry.until(core.TypeAgentRunEnd)
			break
		}
		if !strings.Contains(kinds(retried), core.TypeTextDelta) {
			t.Fatalf("the retried resume: %s", kinds(retried))
		}
		var got []core.Frame
		select {
		case got = <-tail:
		case <-time.After(20 * time.Second):
			t.Fatal("the tail did not end with the retry")
		}
		ends := 0
		for _, fr := range got {
			switch c := fr.Crumb.(type) {
			case *core.AgentRunEnd:
				ends++
			case *core.AgentError:
				t.Fatalf("the tail saw agent:error %s: %s", c.Error.Code, kinds(got))
			}
		}
		if ends != 1 || got[len(got)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
			t.Fatalf("the tail: %s", kinds(got))
		}
		var final struct{ Status, ErrorCode string }
		if getJSON(t, b.base+"/runs/"+hr.RunID, &final); final.Status != "completed" || final.ErrorCode != "" {
			t.Fatalf("after the retry: %+v", final)
		}
		kill9(t, b)
	})
}

// TestKillNineOnPostgresWithTwoReplicas: the same guarantees across two
// replicas on one PostgreSQL schema and no Redis: a tail on B of a run on A
// ends with RUN_LOST once A is killed (B's sweeper finds the lapsed lease),
// and a run suspended on A is resumed on B exactly once.
func TestKillNineOnPostgresWithTwoReplicas(t *testing.T) {
	pg, _ := services(t)
	dir := integrityProject(t, `store: {type: postgres, url: "${DB_URL}"}`)
	env := []string{"DB_URL=" + freshSchema(t, pg)}
	a := startReplica(t, dir, env)
	b := startReplica(t, dir, env)

	fs := open(t, "POST", a.base+"/agents/publisher/run", `{"input":"publish"}`).until(core.TypeHumanRequired)
	hr := fs[len(fs)-1].Crumb.(*core.HumanRequired)

	run := open(t, "POST", a.base+"/agents/slow/run", `{"input":"go"}`)
	runID := run.until(core.TypeTextDelta)[0].RunID
	done := make(chan []core.Frame, 1)
	go func() { done <- open(t, "GET", b.base+"/runs/"+runID+"/stream", "").until(core.TypeAgentError) }()
	time.Sleep(300 * time.Millisecond) // the tail is open on B
	kill9(t, a)
	select {
	case fs := <-done:
		if end := fs[len(fs)-1].Crumb.(*core.AgentError); end.Error.Code != core.CodeRunLost {
			t.Fatalf("B's tail ends with %s", end.Error.Code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("B's tail of the run killed on A did not end")
	}
	var rec struct{ Status string }
	if code := getJSON(t, b.base+"/runs/"+runID, &rec); code != 200 || rec.Status != "lost" {
		t.Fatalf("GET /runs/%s on B = %d %+v", runID, code, rec)
	}

	cont := open(t, "POST", b.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).until(core.TypeAgentRunEnd)
	if out, _ := json.Marshal(cont[len(cont)-1].Crumb.(*core.AgentRunEnd).Output); string(out) != `"Published everywhere."` {
		t.Fatalf("the run suspended on A, resumed on B: %s", out)
	}
	again := open(t, "POST", b.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).until(core.TypeAgentError)
	if code := again[len(again)-1].Crumb.(*core.AgentError).Error.Code; code != core.CodeCheckpointNotFound {
		t.Fatalf("a second resume: %s", code)
	}
}
