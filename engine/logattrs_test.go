package engine_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// lockedLog is a log sink safe for the run's goroutines and the test's.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedLog) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The engine's line about a failed run names it by run_id, session_id and
// agent_id, the keys of core.RunLogAttrs.
func TestRunFailedLineNamesTheRun(t *testing.T) {
	logs := &lockedLog{}
	model := modeltest.New(modeltest.Fail(&core.BreadError{Code: core.CodeProviderError, Message: "the provider refused the request", Cause: errors.New("quota exceeded for key k-123")}))
	in, err := engine.New(engine.Config{
		Store: memory.New(), Providers: model.Registry("m"),
		Agents: []*core.Agent{{ID: "a", Model: core.ModelRef{Provider: "m", Model: "x"}}},
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	var runID, sessionID string
	for c := range in.Run(context.Background(), "a", "go", core.RunOptions{}) {
		if s, ok := c.(*core.AgentRunStart); ok {
			runID, sessionID = s.RunID, s.SessionID
		}
	}
	want := `msg="bread: run failed" run_id=` + runID + " session_id=" + sessionID + " agent_id=a"
	if runID == "" || sessionID == "" || !strings.Contains(logs.String(), want) {
		t.Fatalf("no %q in:\n%s", want, logs.String())
	}
	// The cause the client is not shown is logged for the operator.
	if !strings.Contains(logs.String(), `code=PROVIDER_ERROR cause="quota exceeded for key k-123"`) {
		t.Errorf("the failure's cause is not logged:\n%s", logs.String())
	}
}
