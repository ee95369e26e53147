package examplestest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

func TestResearcherWriter(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "researcher-writer")
	article := transcriptText(t, filepath.Join(dir, "transcripts/editor.jsonl"), 2)
	research := transcriptText(t, filepath.Join(dir, "transcripts/researcher.jsonl"), 0)
	verdicts := transcriptText(t, filepath.Join(dir, "transcripts/fact-checker.jsonl"), 0)

	t.Run("invoke delegates and returns the article", func(t *testing.T) {
		r := mustBread(t, invocation{dir: dir, args: []string{"invoke", "editor", "sourdough", "--trace"}})
		if strings.TrimSpace(r.stdout) != article {
			t.Errorf("stdout %q, want the editor's article %q", r.stdout, article)
		}
		calls := strings.Count(r.stderr, "> core_delegate(")
		if calls != 3 {
			t.Errorf("want three core_delegate calls in the trace, got %d: %s", calls, r)
		}
		for _, id := range []string{"researcher", "fact-checker", "writer"} {
			if !strings.Contains(r.stderr, `> core_delegate({"agentId":"`+id+`"`) {
				t.Errorf("no delegation to %s: %s", id, r)
			}
		}
	})
	t.Run("visibility over HTTP", func(t *testing.T) {
		srv := startServer(t, copyExample(t, "researcher-writer"), nil)
		crumbs := stream(t, srv.URL+"/agents/editor/run", `{"input":"sourdough"}`, nil)
		if out := text(runEnd(t, crumbs, "editor").Output); out != article {
			t.Errorf("editor output %v, want %q", out, article)
		}
		// researcher is passthrough: its own run streams to the client.
		if out := text(runEnd(t, crumbs, "researcher").Output); out != research {
			t.Errorf("researcher output %v, want %q", out, research)
		}
		// fact-checker is mediate: only the subagent framing reaches the
		// client, with the output.
		for _, c := range crumbs {
			if c.Base().AgentID == "fact-checker" {
				switch c.(type) {
				case *core.SubagentRunStart, *core.SubagentRunEnd:
				default:
					t.Errorf("a mediated sub-agent leaked a %s crumb", c.CrumbType())
				}
			}
		}
		ends := crumbsOf[*core.SubagentRunEnd](crumbs)
		if len(ends) != 1 || ends[0].SubagentID != "fact-checker" || ends[0].ParentAgentID != "editor" || text(ends[0].Output) != verdicts {
			t.Errorf("want one subagent:run:end of fact-checker carrying its verdicts, got %+v", ends)
		}
		if n := len(crumbsOf[*core.SubagentRunStart](crumbs)); n != 1 {
			t.Errorf("want one subagent:run:start, got %d", n)
		}
	})
}
