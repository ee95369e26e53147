package stdout_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/stdout"
)

func publish(t *testing.T, tr *stdout.Transport, cs ...core.Crumb) {
	t.Helper()
	for i, c := range cs {
		if err := tr.Publish(context.Background(), core.Frame{RunID: "r", Seq: int64(i + 1), Crumb: c}); err != nil {
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
	tr := stdout.New(stdout.Options{Writer: &bytes.Buffer{}, Getenv: func(string) string { return "1" }})
	if tr.Capability() != core.Sink {
		t.Error("stdout is a sink")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed pipe") }

func TestWriterErrorsAreReturned(t *testing.T) {
	tr := stdout.New(stdout.Options{Writer: failingWriter{}})
	if err := tr.Publish(context.Background(), core.Frame{Crumb: &core.TextDelta{Delta: "x"}}); err == nil {
		t.Fatal("want the writer's error")
	}
}

func TestConcurrentPublish(t *testing.T) {
	var buf bytes.Buffer
	tr := stdout.New(stdout.Options{Writer: &buf})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				_ = tr.Publish(context.Background(), core.Frame{Crumb: &core.ToolCall{ToolName: "t"}})
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
	if err := tr.Publish(context.Background(), core.Frame{Crumb: &core.AgentRunEnd{CrumbBase: base()}}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("a run end after a complete line prints nothing: %q", buf.String())
	}
}
