package examplestest

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
)

func TestPipeline(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "pipeline")
	outlines := transcriptText(t, filepath.Join(dir, "transcripts/researcher.jsonl"), 0)
	var sections []string
	if err := json.Unmarshal([]byte(outlines), &sections); err != nil || len(sections) != 3 {
		t.Fatalf("the researcher's transcript should stream a JSON array of three outlines: %q (%v)", outlines, err)
	}
	var paragraphs []string
	for call := range 3 {
		paragraphs = append(paragraphs, transcriptText(t, filepath.Join(dir, "transcripts/writer.jsonl"), call))
	}

	t.Run("the article pipeline maps the writer over the outline", func(t *testing.T) {
		srv := startServer(t, dir, nil)
		crumbs := stream(t, srv.URL+"/pipelines/article/run", `{"input":"sourdough"}`, nil)
		ends := crumbsOf[*core.PipelineStepEnd](crumbs)
		if len(ends) != 2 {
			t.Fatalf("want two pipeline:step:end, got %s", crumbTypes(crumbs))
		}
		if got := stringList(t, ends[0].Output); !slices.Equal(got, sections) {
			t.Errorf("step 0 output %q, want %q", got, sections)
		}
		if got := stringList(t, ends[1].Output); !slices.Equal(got, paragraphs) {
			t.Errorf("step 1 output %q, want the writer's paragraphs in order %q", got, paragraphs)
		}
		var inputs []string
		for _, s := range crumbsOf[*core.AgentRunStart](crumbs) {
			if s.AgentID == "writer" {
				inputs = append(inputs, text(s.Input))
			}
		}
		if !slices.Equal(inputs, sections) {
			t.Errorf("the writer ran on %s, want one run per outline %s", jsonText(inputs), jsonText(sections))
		}
	})
	t.Run("the researcher answers JSON", func(t *testing.T) {
		r := mustBread(t, invocation{dir: copyExample(t, "pipeline"), args: []string{"invoke", "researcher", "sourdough", "--json"}})
		var got []string
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || !slices.Equal(got, sections) {
			t.Errorf("invoke --json: %s (%v)", r, err)
		}
	})
}

// stringList decodes an output that is a JSON array of strings.
func stringList(t *testing.T, v any) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(jsonText(v)), &out); err != nil {
		t.Fatalf("output %s is not a list of strings: %v", jsonText(v), err)
	}
	return out
}
