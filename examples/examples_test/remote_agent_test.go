package examplestest

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

// TestRemoteAgent runs the two projects as two servers: the provider as a
// bread start process, the consumer both in process (invoke, eval) and as a
// second server whose planner delegates to the provider's researcher.
func TestRemoteAgent(t *testing.T) {
	t.Parallel()
	var b [8]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])

	providerDir := copyExample(t, "remote-agent/provider")
	provider := startServer(t, providerDir, map[string]string{"RESEARCH_TOKEN": token})
	researcherAnswer := transcriptText(t, filepath.Join(providerDir, "transcripts/researcher.jsonl"), 0)

	consumerDir := copyExample(t, "remote-agent/consumer")
	plan := transcriptText(t, filepath.Join(consumerDir, "transcripts/planner.jsonl"), 1)
	env := map[string]string{"PROVIDER_URL": provider.URL, "RESEARCH_TOKEN": token}

	t.Run("the planner delegates to the remote researcher", func(t *testing.T) {
		r := mustBread(t, invocation{dir: consumerDir, env: env, args: []string{"invoke", "planner", "Plan a tangier sourdough bake.", "--trace"}})
		if strings.TrimSpace(r.stdout) != plan {
			t.Errorf("stdout %q, want the plan %q", r.stdout, plan)
		}
		// The delegation's result is what the provider's model said.
		if !strings.Contains(r.stderr, `> core_delegate({"agentId":"researcher"`) || !strings.Contains(r.stderr, researcherAnswer[:60]) {
			t.Errorf("the trace should show the researcher's remote answer: %s", r)
		}
	})
	t.Run("the consumer runs the remote agent directly", func(t *testing.T) {
		r := mustBread(t, invocation{dir: consumerDir, env: env, args: []string{"invoke", "researcher", "What makes sourdough sour?"}})
		if strings.TrimSpace(r.stdout) != researcherAnswer {
			t.Errorf("stdout %q, want the provider's answer %q", r.stdout, researcherAnswer)
		}
	})
	t.Run("the consumer's eval passes against the provider", func(t *testing.T) {
		mustBread(t, invocation{dir: consumerDir, env: env, args: []string{"eval"}})
	})
	t.Run("a wrong key is refused", func(t *testing.T) {
		wrong := map[string]string{"PROVIDER_URL": provider.URL, "RESEARCH_TOKEN": "not-" + token}
		r := bread(t, invocation{dir: consumerDir, env: wrong, args: []string{"invoke", "researcher", "What makes sourdough sour?"}})
		if r.code == 0 || !strings.Contains(r.stderr, "401") {
			t.Errorf("want a failure naming the 401: %s", r)
		}
	})
	t.Run("the provider refuses a request without the key", func(t *testing.T) {
		res, err := http.Post(provider.URL+"/agents/researcher/run", "application/json", strings.NewReader(`{"input":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("status %s %s, want 401", res.Status, body)
		}
	})
	t.Run("two servers: the consumer's stream relays the provider's crumbs", func(t *testing.T) {
		consumer := startServer(t, copyExample(t, "remote-agent/consumer"), env)
		crumbs := stream(t, consumer.URL+"/agents/planner/run", `{"input":"Plan a tangier sourdough bake."}`, nil)
		if out := text(runEnd(t, crumbs, "planner").Output); out != plan {
			t.Errorf("planner output %v, want %q", out, plan)
		}
		if out := text(runEnd(t, crumbs, "researcher").Output); out != researcherAnswer {
			t.Errorf("relayed researcher output %v, want %q", out, researcherAnswer)
		}
		var relayed strings.Builder
		for _, d := range crumbsOf[*core.TextDelta](crumbs) {
			if d.AgentID == "researcher" {
				relayed.WriteString(d.Delta)
			}
		}
		if relayed.String() != researcherAnswer {
			t.Errorf("relayed researcher text %q, want %q", relayed.String(), researcherAnswer)
		}
	})
}
