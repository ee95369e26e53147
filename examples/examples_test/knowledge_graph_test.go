package examplestest

import (
	"context"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/providers/replay"
)

const adaNote = "Note: Ada Lovelace published the first computer program, for Charles Babbage's Analytical Engine."

func TestKnowledgeGraph(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "knowledge-graph")
	answer := transcriptText(t, filepath.Join(dir, "transcripts/memory.jsonl"), 3)

	spy := &promptSpy{}
	first := mustBread(t, invocation{dir: dir, args: []string{"invoke", "memory", "-s", "notes", "--trace", adaNote}, providers: spy.registry(dir)})
	if strings.TrimSpace(first.stdout) != answer {
		t.Errorf("stdout %q, want %q", first.stdout, answer)
	}
	for _, want := range []string{
		// the task's structured answer is the tool result
		`< task_extract_entities {"entities":[{"name":"Ada Lovelace","type":"person"},`,
		`> core_kg_store({"label":"Charles Babbage"`,
		`> core_kg_store({"label":"Analytical Engine"`,
		// the query reads back what the run stored
		`< core_kg_query [{"id":`,
		`"label":"Ada Lovelace","data":{"note":"published the first computer program","type":"person"}}]`,
	} {
		if !strings.Contains(first.stderr, want) {
			t.Errorf("trace lacks %q: %s", want, first)
		}
	}
	if p := spy.first("transcripts/memory.jsonl"); strings.Contains(p, "## Knowledge Graph Context") {
		t.Errorf("a new session has no knowledge yet, but the prompt holds some:\n%s", p)
	}
	if p := spy.first("transcripts/extract_entities.jsonl"); !strings.Contains(p, "List the named entities") {
		t.Errorf("the task's call should carry its instructions:\n%s", p)
	}

	// A second run in the same session starts with the stored entities in
	// its system prompt.
	spy = &promptSpy{}
	mustBread(t, invocation{dir: dir, args: []string{"invoke", "memory", "-s", "notes", "Who was Ada Lovelace?"}, providers: spy.registry(dir)})
	p := spy.first("transcripts/memory.jsonl")
	for _, want := range []string{"## Knowledge Graph Context", "Ada Lovelace (note: published the first computer program, type: person)", "Charles Babbage", "Analytical Engine"} {
		if !strings.Contains(p, want) {
			t.Errorf("the second run's system prompt lacks %q:\n%s", want, p)
		}
	}

	// Another session knows nothing of it.
	spy = &promptSpy{}
	mustBread(t, invocation{dir: dir, args: []string{"invoke", "memory", "-s", "other", "Who was Ada Lovelace?"}, providers: spy.registry(dir)})
	if p := spy.first("transcripts/memory.jsonl"); strings.Contains(p, "## Knowledge Graph Context") {
		t.Errorf("knowledge leaked into another session:\n%s", p)
	}
}

// promptSpy replays the project's transcripts like the replay provider and
// records the system prompt of every model call.
type promptSpy struct {
	mu      sync.Mutex
	prompts map[string][]string // model id → system prompts, in call order
}

func (s *promptSpy) registry(dir string) core.ProviderRegistry {
	inner := replay.Registry(dir, replay.Options{NoDelay: true})["replay"]
	return core.ProviderRegistry{"replay": func(modelID string) (core.LanguageModel, error) {
		m, err := inner(modelID)
		if err != nil {
			return nil, err
		}
		return spyModel{spy: s, id: modelID, m: m}, nil
	}}
}

func (s *promptSpy) first(modelID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.prompts[modelID]) == 0 {
		return ""
	}
	return s.prompts[modelID][0]
}

type spyModel struct {
	spy *promptSpy
	id  string
	m   core.LanguageModel
}

func (m spyModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	m.spy.mu.Lock()
	if m.spy.prompts == nil {
		m.spy.prompts = map[string][]string{}
	}
	m.spy.prompts[m.id] = append(m.spy.prompts[m.id], req.System)
	m.spy.mu.Unlock()
	return m.m.Stream(ctx, req)
}
