package stdout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/stdout"
)

func publish(t *testing.T, tr *stdout.Printer, cs ...core.Crumb) {
	t.Helper()
	for _, c := range cs {
		if err := tr.Print(c); err != nil {
			t.Fatal(err)
		}
	}
}

func base() core.CrumbBase { return core.CrumbBase{AgentID: "writer", RunID: "r", SessionID: "s"} }

func TestPlainRendering(t *testing.T) {
	var buf bytes.Buffer
	tr := stdout.New(stdout.Options{Writer: &buf})
	publish(t, tr,
		&core.AgentRunStart{CrumbBase: base()},
		&core.TextDelta{CrumbBase: base(), Delta: "Let me "},
		&core.TextDelta{CrumbBase: base(), Delta: "check."},
		&core.ToolCall{CrumbBase: base(), ToolName: "tool_weather", Args: map[string]string{"city": "Rome"}},
		&core.ToolResult{CrumbBase: base(), ToolName: "tool_weather", Result: map[string]string{"sky": "sunny"}},
		&core.ToolError{CrumbBase: base(), ToolName: "tool_boom", Error: &core.BreadError{Code: "TOOL_ERROR", Message: "disk on fire"}},
		&core.TextDelta{CrumbBase: base(), Delta: "Sunny."},
		&core.HumanRequired{CrumbBase: base(), CheckpointID: "cp1", ToolName: "tool_publish", Kind: core.HumanApproval, Schema: map[string]string{"url": "x"}},
		&core.AgentError{CrumbBase: base(), Error: &core.BreadError{Code: core.CodeRunCancelled, Message: "the run was cancelled"}},
	)
	want := strings.Join([]string{
		"Let me check.",
		`> tool_weather({"city":"Rome"})`,
		`  < tool_weather {"sky":"sunny"}`,
		"  ! tool_boom: TOOL_ERROR: disk on fire",
		"Sunny.",
		`? approval needed: tool_publish({"url":"x"}) [checkpoint cp1]`,
		"error: RUN_CANCELLED: the run was cancelled",
		"",
	}, "\n")
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	if strings.Contains(buf.String(), "\x1b[") {
		t.Error("a non-terminal writer gets no escape codes")
	}
}

func TestColorAndVerbose(t *testing.T) {
	var buf bytes.Buffer
	tr := stdout.New(stdout.Options{Writer: &buf, Color: stdout.ColorAlways, Verbose: true, Reasoning: true, MaxResultBytes: 5})
	publish(t, tr,
		&core.AgentRunStart{CrumbBase: base(), Skill: "brief"},
		&core.ReasoningDelta{CrumbBase: base(), Delta: "hmm"},
		&core.ToolResult{CrumbBase: base(), ToolName: "t", Result: "a very long result"},
		&core.PipelineStepStart{CrumbBase: base(), PipelineID: "p", StepIndex: 0},
		&core.AgentRunEnd{CrumbBase: base(), DurationMs: 12},
	)
	out := buf.String()
	for _, want := range []string{"\x1b[", "▶ writer (skill brief)", "hmm", "a ver…", "▶ p step 0 (writer)", "■ writer done in 12ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in %q", want, out)
		}
	}
}

func TestNoColorEnv(t *testing.T) {
	var buf bytes.Buffer
	tr := stdout.New(stdout.Options{Writer: &buf, Getenv: func(string) string { return "1" }})
	publish(t, tr, &core.ToolCall{CrumbBase: base(), ToolName: "t"})
	if strings.Contains(buf.String(), "\x1b[") {
		t.Error("NO_COLOR: no escape codes")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed pipe") }

func TestWriterErrorsAreReturned(t *testing.T) {
	tr := stdout.New(stdout.Options{Writer: failingWriter{}})
	if err := tr.Print(&core.TextDelta{Delta: "x"}); err == nil {
		t.Fatal("want the writer's error")
	}
	tr.Listen(context.Background(), &core.TextDelta{Delta: "x"}) // a listener drops it
}

func TestConcurrentPublish(t *testing.T) {
	var buf bytes.Buffer
	tr := stdout.New(stdout.Options{Writer: &buf})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				tr.Listen(context.Background(), &core.ToolCall{ToolName: "t"})
			}
		})
	}
	wg.Wait()
	if n := strings.Count(buf.String(), "\n"); n != 400 {
		t.Errorf("lines %d", n)
	}
}

func TestRunEndAfterACompleteLinePrintsNothing(t *testing.T) {
	var buf bytes.Buffer
	tr := stdout.New(stdout.Options{Writer: &buf})
	if err := tr.Print(&core.AgentRunEnd{CrumbBase: base()}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("a run end after a complete line prints nothing: %q", buf.String())
	}
}

func TestFilter(t *testing.T) {
	var buf bytes.Buffer
	tools := func(c core.Crumb) bool { _, ok := c.(*core.ToolCall); return ok }
	tr := stdout.New(stdout.Options{Writer: &buf, Filter: tools})
	publish(t, tr, &core.TextDelta{CrumbBase: base(), Delta: "hidden"}, &core.ToolCall{CrumbBase: base(), ToolName: "t"}, nil)
	if buf.String() != "> t(null)\n" {
		t.Errorf("filtered output %q", buf.String())
	}
}

// A Printer registered with the engine prints every run while the runs'
// own streams go on (the engine's bus and consumers are untouched).
func TestListenerOnAnEngine(t *testing.T) {
	var buf bytes.Buffer
	model := modeltest.New(modeltest.Text("Bread ", "is ", "good."))
	inst, err := engine.New(engine.Config{Store: memory.New(), Providers: model.Registry("m"),
		Agents: []*core.Agent{{ID: "writer", Model: core.ModelRef{Provider: "m", Model: "x"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(context.Background())
	remove := inst.On(stdout.New(stdout.Options{Writer: &buf, Verbose: true}).Listen)
	out, err := inst.RunSync(context.Background(), "writer", "hi", core.RunOptions{})
	if err != nil || out.Output != "Bread is good." {
		t.Fatalf("run: %v %v", out, err)
	}
	if got := buf.String(); !strings.HasPrefix(got, "▶ writer\nBread is good.\n") {
		t.Errorf("printed %q", got)
	}
	remove()
	buf.Reset()
	if _, err := inst.RunSync(context.Background(), "writer", "hi", core.RunOptions{}); err == nil && buf.Len() != 0 {
		t.Errorf("printed after the listener was removed: %q", buf.String())
	}
}

// A result read back from a log or a bus arrives as raw JSON, spaced the
// way the tool wrote it: it prints compact, as a live run's value does,
// and a JSON string prints as the string.
func TestRawResultsPrintLikeLiveOnes(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want string
	}{
		{"spaced object", `{"published": true, "url": "https://x/y"}`, `  < tool_publish {"published":true,"url":"https://x/y"}`},
		{"string", `"done"`, `  < tool_publish done`},
		{"not JSON", `{oops`, `  < tool_publish {oops`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tr := stdout.New(stdout.Options{Writer: &buf})
			publish(t, tr, &core.ToolResult{CrumbBase: base(), ToolName: "tool_publish", Result: json.RawMessage(tc.raw)})
			if got := strings.TrimSuffix(buf.String(), "\n"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
