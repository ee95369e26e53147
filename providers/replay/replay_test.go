package replay_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/providers/replay"
	"github.com/breadai/bread/typed"
)

func drain(t *testing.T, m core.LanguageModel) ([]core.ModelEvent, error) {
	t.Helper()
	var evs []core.ModelEvent
	for ev, err := range m.Stream(context.Background(), core.ModelRequest{}) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func TestReplayPlaysCallsInOrderAndCycles(t *testing.T) {
	m, err := replay.Open("testdata/weather.jsonl", replay.Options{Mode: replay.Sequence})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := drain(t, m)
	second, _ := drain(t, m)
	third, _ := drain(t, m)
	if len(first) != 5 || first[3].Type != core.EventToolCall || string(first[3].Input) != `{"city":"Rome"}` || first[4].Usage.TotalTokens != 28 {
		t.Errorf("call 0: %+v", first)
	}
	if len(second) != 4 || second[2].Delta != "in Rome." || second[3].FinishReason != core.FinishStop {
		t.Errorf("call 1: %+v", second)
	}
	if len(third) != 5 {
		t.Errorf("the transcript starts over: %+v", third)
	}
}

func TestReplayOnce(t *testing.T) {
	m, _ := replay.Open("testdata/weather.jsonl", replay.Options{Mode: replay.Sequence, Once: true})
	drain(t, m)
	drain(t, m)
	_, err := drain(t, m)
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != replay.CodeExhausted {
		t.Fatalf("got %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]string{
		"not json":          `{"call":0,`,
		"unknown type":      `{"call":0,"type":"telepathy"}`,
		"call out of order": "{\"call\":0,\"type\":\"finish\"}\n{\"call\":2,\"type\":\"finish\"}",
		"tool call no name": `{"call":0,"type":"tool-call","toolCallId":"x"}`,
		"empty":             "",
		"error no object":   `{"call":0,"type":"error"}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := replay.Parse(strings.NewReader(in))
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestReplayedError(t *testing.T) {
	tr, err := replay.Parse(strings.NewReader(`{"call":0,"type":"text-delta","delta":"a"}` + "\n" + `{"call":0,"type":"error","error":{"code":"RATE_LIMITED","message":"slow down"}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(t, replay.NewModel(tr, replay.Options{}))
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeRateLimited {
		t.Fatalf("got %v", err)
	}
}

func TestDelayHonoursCancellation(t *testing.T) {
	tr, _ := replay.Parse(strings.NewReader(`{"call":0,"type":"text-delta","delta":"a","delayMs":60000}`))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	for _, err := range replay.NewModel(tr, replay.Options{}).Stream(ctx, core.ModelRequest{}) {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
	}
}

// Recording a scripted model and replaying the recording drives the same
// run, crumb for crumb.
func TestRecordThenReplay(t *testing.T) {
	scripted := modeltest.New(
		modeltest.ToolCall("tool_echo", map[string]string{"s": "x"}),
		modeltest.Reasoning([]string{"think"}, "done ", "now"),
	)
	var buf bytes.Buffer
	rec := replay.NewRecorder(&buf)
	echo := typed.DefineTool("echo", "", func(_ context.Context, a struct {
		S string `json:"s"`
	}, _ core.ToolContext) (string, error) {
		return a.S, nil
	})
	run := func(reg core.ProviderRegistry) []string {
		in, err := engine.New(engine.Config{Store: memory.New(), Providers: reg, Agents: []*core.Agent{{ID: "a", Model: core.ModelRef{Provider: "p", Model: "m"}, Tools: []core.Tool{echo}}}})
		if err != nil {
			t.Fatal(err)
		}
		_ = in.Start(context.Background())
		defer in.Stop(context.Background())
		var out []string
		for c, err := range in.Run(context.Background(), "a", "go", core.RunOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c.CrumbType())
		}
		return out
	}
	live := run(rec.WrapRegistry(scripted.Registry("p")))
	if rec.Err() != nil {
		t.Fatal(rec.Err())
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.jsonl"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := replay.Registry(dir, replay.Options{})
	replayed := run(core.ProviderRegistry{"p": func(string) (core.LanguageModel, error) { return reg["replay"]("run.jsonl") }})
	if strings.Join(live, ",") != strings.Join(replayed, ",") {
		t.Errorf("live %v\nreplayed %v", live, replayed)
	}
}

func TestRegistryRefusesPathsOutside(t *testing.T) {
	reg := replay.Registry(t.TempDir(), replay.Options{})
	if _, err := reg["replay"]("../../etc/passwd"); err == nil {
		t.Fatal("want an error")
	}
	if _, err := reg["replay"]("missing.jsonl"); err == nil {
		t.Fatal("want an error")
	}
}

func FuzzParse(f *testing.F) {
	seed, _ := os.ReadFile("testdata/weather.jsonl")
	f.Add(string(seed))
	f.Add(`{"call":0,"type":"file","file":{"mediaType":"image/png","data":"iVBO"}}`)
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := replay.Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		for range tr.Calls() {
			drain(t, replay.NewModel(tr, replay.Options{NoDelay: true}))
		}
	})
}

func TestConversationModePicksTheCallByHistory(t *testing.T) {
	m, _ := replay.Open("testdata/weather.jsonl", replay.Options{Mode: replay.Conversation})
	first := core.ModelRequest{Messages: []core.Message{{Role: core.RoleUser}}}
	second := core.ModelRequest{Messages: []core.Message{{Role: core.RoleUser}, {Role: core.RoleAssistant}, {Role: core.RoleTool}}}
	for range 3 { // any number of calls, in any order: the history decides
		var evs []core.ModelEvent
		for ev := range m.Stream(context.Background(), second) {
			evs = append(evs, ev)
		}
		if len(evs) != 4 || evs[3].FinishReason != core.FinishStop {
			t.Fatalf("after one assistant turn: call 1, got %+v", evs)
		}
		evs = nil
		for ev := range m.Stream(context.Background(), first) {
			evs = append(evs, ev)
		}
		if evs[len(evs)-1].FinishReason != core.FinishToolCalls {
			t.Fatalf("a fresh conversation plays call 0, got %+v", evs)
		}
	}
}

func TestRegistryModeSuffix(t *testing.T) {
	reg := replay.Registry("testdata", replay.Options{})
	seq, err := reg["replay"]("weather.jsonl#sequence")
	if err != nil {
		t.Fatal(err)
	}
	first, _ := drain(t, seq)
	second, _ := drain(t, seq)
	if len(first) != 5 || len(second) != 4 {
		t.Fatalf("#sequence plays the calls in order: %d then %d events", len(first), len(second))
	}
	conv, err := reg["replay"]("weather.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := drain(t, conv)
	b, _ := drain(t, conv)
	if len(a) != 5 || len(b) != 5 {
		t.Fatalf("the default picks by conversation (an empty one is call 0): %d then %d events", len(a), len(b))
	}
	if _, err := reg["replay"]("weather.jsonl#shuffle"); err == nil {
		t.Fatal("an unknown mode suffix was accepted")
	}
}
