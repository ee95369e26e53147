package examplestest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// aguiRun posts a RunAgentInput to the example's AG-UI route and returns
// the events of the SSE answer, keep-alive comments left out.
func aguiRun(t *testing.T, url string, input map[string]any) []map[string]any {
	t.Helper()
	body, _ := json.Marshal(input)
	res, err := http.Post(url, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var evs []map[string]any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestAGUI(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "ag-ui")
	srv := startServer(t, dir, nil)
	url := srv.URL + "/ag-ui/run"
	answer := transcriptText(t, filepath.Join(dir, "transcripts/planner.jsonl"), 1)

	evs := aguiRun(t, url, map[string]any{"threadId": "visit-1", "runId": "c-1",
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "Plan my bakery visit"}}})
	var types []string
	for _, ev := range evs {
		types = append(types, ev["type"].(string))
	}
	for _, want := range []string{"RUN_STARTED", "REASONING_START", "REASONING_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED"} {
		if !slices.Contains(types, want) {
			t.Fatalf("events %v lack %s", types, want)
		}
	}
	fin := evs[len(evs)-1]
	outcome, _ := fin["outcome"].(map[string]any)
	ints, _ := outcome["interrupts"].([]any)
	if outcome["type"] != "interrupt" || len(ints) != 2 {
		t.Fatalf("the run finishes with both questions as interrupts: %v", fin)
	}
	answers := map[string]any{"Which day suits you?": map[string]any{"day": "Saturday"}, "Which neighbourhood?": map[string]any{"area": "the market"}}
	var resume []any
	for _, in := range ints {
		in := in.(map[string]any)
		resume = append(resume, map[string]any{"interruptId": in["id"], "status": "resolved", "payload": answers[in["message"].(string)]})
	}

	evs = aguiRun(t, url, map[string]any{"threadId": "visit-1", "runId": "c-2", "messages": []any{}, "resume": resume})
	fin = evs[len(evs)-1]
	if fin["type"] != "RUN_FINISHED" || fin["result"] != answer || fin["outcome"] != nil {
		t.Fatalf("answering both in one request finishes the run with its answer: %v", fin)
	}
}
