package replay_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/lmtest"
	"github.com/breadai/bread/providers/replay"
)

// Each scenario becomes a one-call transcript; a stall is a finish an hour
// away, which only a cancelled context or an early stop cuts short.
func TestConformance(t *testing.T) {
	lmtest.Run(t, lmtest.Features{}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
		tr, err := replay.Parse(strings.NewReader(transcript(t, s)))
		if err != nil {
			t.Fatal(err)
		}
		return replay.NewModel(tr, replay.Options{})
	})
}

func transcript(t *testing.T, s lmtest.Scenario) string {
	var b strings.Builder
	line := func(v map[string]any) {
		v["call"] = 0
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(raw, '\n'))
	}
	for _, ev := range s.Events() {
		l := map[string]any{"type": ev.Type, "delta": ev.Delta, "toolCallId": ev.ToolCallID, "toolName": ev.ToolName, "finishReason": ev.FinishReason}
		if ev.Input != nil {
			l["input"] = ev.Input
		}
		if ev.Type == core.EventFinish {
			l["usage"] = ev.Usage
		}
		line(l)
	}
	if err := s.Err(); err != nil {
		line(map[string]any{"type": "error", "error": core.Sanitize(err)})
	}
	if s.Stall {
		line(map[string]any{"type": "finish", "delayMs": 3_600_000})
	}
	return b.String()
}
