package cli_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/extensions/otel/oteltest"
)

// otelYAML is the plugins: section exporting traces to the collector.
func otelYAML(service, collector string) string {
	return "plugins:\n  - type: otel\n    serviceName: " + service + "\n    traces: {exporter: otlp, endpoint: " + collector + "}\n"
}

// TestOneTraceAcrossTwoServers runs a pipeline on one `bread start`
// whose first step is a remote agent served by a second `bread start`,
// and whose second step is a local agent calling a tool. Both processes
// export to one collector; the spans form one trace, whose shape is
// asserted whole.
func TestOneTraceAcrossTwoServers(t *testing.T) {
	coll := oteltest.NewCollector(t)
	env := []string{"OTEL_BSP_SCHEDULE_DELAY=50"}
	research := project(t, map[string]string{
		"bread.yaml":                   "entrypoints: [researcher]\nstore: {type: sqlite, path: ./bread.db}\n" + otelYAML("research", coll.URL),
		"agents/researcher/agent.yaml": "model: {provider: replay, model: t/r.jsonl}\n",
		"t/r.jsonl":                    transcript("Rye needs a starter."),
	})
	remote := startReplica(t, research, env)
	front := project(t, map[string]string{
		"bread.yaml": "entrypoints: [writer]\nstore: {type: sqlite, path: ./bread.db}\n" +
			"remoteAgents:\n  researcher: {type: httpchunked, url: " + remote.base + "}\n" +
			"pipelines:\n  brief:\n    - {type: agent, agentId: researcher}\n    - {type: agent, agentId: writer}\n" +
			otelYAML("front", coll.URL),
		"agents/writer/agent.yaml":       "model: {provider: replay, model: t/w.jsonl}\n",
		"agents/writer/tools/stamp.yaml": "description: Stamps a text.\ntype: command\ncommand: [cat]\ninputSchema: {type: object, properties: {text: {type: string}}}\n",
		"t/w.jsonl": transcript(
			`raw:{"call":N,"type":"tool-call","toolCallId":"s1","toolName":"tool_stamp","input":{"text":"rye"}}`,
			"Rye bread, stamped.",
		),
	})
	local := startReplica(t, front, env)

	resp, err := http.Post(local.base+"/pipelines/brief/run", "application/json", strings.NewReader(`{"input":"rye"}`))
	if err != nil {
		t.Fatal(err)
	}
	var last string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			last = l
		}
	}
	resp.Body.Close()
	if !strings.Contains(last, "Rye bread, stamped.") {
		t.Fatalf("the pipeline ended with %s", last)
	}

	want := `POST [front]
  pipeline.step.0 [front]
    POST [front]
      POST [research]
        agent.run [research]
          chat t/r.jsonl [research]
  pipeline.step.1 [front]
    agent.run [front]
      chat t/w.jsonl [front]
      tool.call.tool_stamp [front]
      chat t/w.jsonl [front]
`
	// The run's trace starts at the front server's span for the request
	// (the readiness probes' GETs are traces of their own).
	run := func(s []oteltest.Span) []oteltest.Span {
		return oteltest.InTrace(s, func(s oteltest.Span) bool { return s.Name == "POST" && s.Service == "front" })
	}
	spans := run(coll.WaitFor(t, 20*time.Second, func(s []oteltest.Span) bool { return oteltest.Tree(run(s)) == want }))
	for _, s := range spans {
		switch {
		case s.Name == "agent.run" && s.Service == "research" && s.Attrs["bread.agent_id"] != "researcher":
			t.Errorf("the remote run's attributes %v", s.Attrs)
		case s.Name == "POST" && s.Kind == "SPAN_KIND_CLIENT" && !strings.HasSuffix(s.Attrs["url.path"].(string), "/agents/researcher/run"):
			t.Errorf("the remote call's attributes %v", s.Attrs)
		case s.Name == "tool.call.tool_stamp" && s.Attrs["bread.status"] != nil:
			t.Errorf("tool attributes %v", s.Attrs)
		}
	}
}
