package examplestest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/breadai/bread/cli"
	"github.com/breadai/bread/core"
)

const publishedURL = "https://blog.example.com/posts/why-sourdough-rises"

func TestHITLApproval(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "hitl-approval")
	ending := transcriptText(t, filepath.Join(dir, "transcripts/publisher.jsonl"), 1)
	// What the chat renders once tools/publish.py has really run.
	toolRan := `< tool_publish {"published":true,"url":"` + publishedURL + `"}`

	t.Run("invoke refuses to wait for a human", func(t *testing.T) {
		r := bread(t, invocation{dir: dir, args: []string{"invoke", "publisher", "publish a post on why sourdough rises"}})
		if r.code != cli.ExitNeedsHITL {
			t.Fatalf("want exit %d: %s", cli.ExitNeedsHITL, r)
		}
		if !strings.Contains(r.stderr, "tool_publish") || !strings.Contains(r.stderr, "bread chat") {
			t.Errorf("the refusal should name the tool and point to chat: %s", r)
		}
		if strings.Contains(r.stdout, ending) {
			t.Errorf("the run went past the approval: %s", r)
		}
	})
	t.Run("chat asks and an approval publishes", func(t *testing.T) {
		r := mustBread(t, invocation{dir: dir, args: []string{"chat"}, stdin: "publish the post\ny\n/exit\n"})
		for _, want := range []string{"wants to run tool_publish", "Approve? [y/N]", toolRan, ending} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("chat output lacks %q: %s", want, r)
			}
		}
	})
	t.Run("chat declined: the tool never runs", func(t *testing.T) {
		r := mustBread(t, invocation{dir: dir, args: []string{"chat"}, stdin: "publish the post\nn\n/exit\n"})
		if !strings.Contains(r.stdout, `resumed with {"approved":false}`) || strings.Contains(r.stdout, toolRan) {
			t.Errorf("a declined publish ran: %s", r)
		}
	})
	t.Run("over HTTP a resume approves", func(t *testing.T) {
		srv := startServer(t, copyExample(t, "hitl-approval"), nil)
		crumbs := stream(t, srv.URL+"/agents/publisher/run", `{"input":"publish the post"}`, nil)
		humans := crumbsOf[*core.HumanRequired](crumbs)
		if len(humans) != 1 || humans[0].ToolName != "tool_publish" || humans[0].Kind != core.HumanApproval {
			t.Fatalf("want one approval for tool_publish, got %s", crumbTypes(crumbs))
		}
		if len(crumbsOf[*core.ToolResult](crumbs)) != 0 {
			t.Fatalf("the tool ran before its approval: %s", crumbTypes(crumbs))
		}
		crumbs = stream(t, srv.URL+"/resume/"+humans[0].CheckpointID, `{"response":{"approved":true}}`, nil)
		results := crumbsOf[*core.ToolResult](crumbs)
		if len(results) != 1 || !strings.Contains(text(results[0].Result), publishedURL) {
			t.Errorf("want the publish result after the approval, got %s", crumbTypes(crumbs))
		}
		if out := text(runEnd(t, crumbs, "publisher").Output); out != ending {
			t.Errorf("output %v, want %q", out, ending)
		}
	})
	t.Run("the approval arrives after a restart", func(t *testing.T) {
		// The checkpoint is in SQLite, and replay picks the turn by
		// conversation: a server started after the first one stopped
		// resumes the run with the right turn.
		dir := copyExample(t, "hitl-approval")
		first := startServer(t, dir, nil)
		humans := crumbsOf[*core.HumanRequired](stream(t, first.URL+"/agents/publisher/run", `{"input":"publish the post"}`, nil))
		if len(humans) != 1 {
			t.Fatal("the run did not ask for an approval")
		}
		first.stop(t)
		second := startServer(t, dir, nil)
		crumbs := stream(t, second.URL+"/resume/"+humans[0].CheckpointID, `{"response":{"approved":true}}`, nil)
		if len(crumbsOf[*core.ToolResult](crumbs)) != 1 || text(runEnd(t, crumbs, "publisher").Output) != ending {
			t.Errorf("the resume after a restart: %s", crumbTypes(crumbs))
		}
	})
}
