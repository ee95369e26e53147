package cli_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
)

// a2aEvents runs an A2A event stream on its own goroutine and hands its
// events over a channel, closed at the stream's end.
func a2aEvents(seq func(func(a2a.Event, error) bool)) <-chan a2a.Event {
	out := make(chan a2a.Event, 64)
	go func() {
		defer close(out)
		for ev, err := range seq {
			if err != nil {
				return
			}
			out <- ev
		}
	}()
	return out
}

func nextA2A(t *testing.T, ch <-chan a2a.Event) a2a.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the A2A stream ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no A2A event within 20s")
	}
	return nil
}

// finalA2A reads a stream to its final status.
func finalA2A(t *testing.T, ch <-chan a2a.Event) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	for {
		if st, ok := nextA2A(t, ch).(*a2a.TaskStatusUpdateEvent); ok && st.Final {
			return st
		}
	}
}

func waitTaskState(t *testing.T, c *a2aclient.Client, id a2a.TaskID, want a2a.TaskState) *a2a.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := c.GetTask(t.Context(), &a2a.TaskQueryParams{ID: id})
		if err == nil && got.Status.State == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %+v, %v; want %s", id, got, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestA2ATasksAcrossReplicas runs two `bread start` processes on one
// PostgreSQL schema and one Redis prefix, each serving two agents over
// A2A: a task started on A is read (tasks/get), resubscribed and cancelled
// on B; a task that waits for input on A is read and answered on B.
func TestA2ATasksAcrossReplicas(t *testing.T) {
	pg, rd := services(t)
	dbURL := freshSchema(t, pg)
	prefix := "bread:a2a:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	dir := project(t, map[string]string{
		"bread.yaml": `store: {type: postgres, url: "${DB_URL}"}
bus: {type: redis, url: "${REDIS_URL}", keyPrefix: "${PREFIX}", leaseTTL: 1s}
providers: {replay: {mode: conversation}}
plugins:
  - {type: a2a, agent: slow, url: /a2a/slow, cardPath: /.well-known/slow.json}
  - {type: a2a, agent: publisher, url: /a2a/publisher, cardPath: /.well-known/publisher.json}
`,
		"agents/publisher/agent.yaml":         "model: {provider: replay, model: t/publisher.jsonl}\n",
		"agents/publisher/tools/confirm.yaml": "type: human\nprompt: Publish?\n",
		"t/publisher.jsonl": `{"call":0,"type":"text-delta","delta":"Let me ask. "}
{"call":0,"type":"tool-call","toolCallId":"h1","toolName":"human_confirm","input":{"post":"hello"}}
{"call":0,"type":"finish","finishReason":"tool-calls"}
{"call":1,"type":"text-delta","delta":"Published ","delayMs":100}
{"call":1,"type":"text-delta","delta":"everywhere."}
{"call":1,"type":"finish","finishReason":"stop"}
`,
		"agents/slow/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\n",
		"t/slow.jsonl": `{"call":0,"type":"text-delta","delta":"working","delayMs":10}
{"call":0,"type":"text-delta","delta":" forever","delayMs":600000}
{"call":0,"type":"finish","finishReason":"stop"}
`,
	})
	env := []string{"DB_URL=" + dbURL, "REDIS_URL=" + rd, "PREFIX=" + prefix}
	a := startReplica(t, dir, env)
	b := startReplica(t, dir, env)

	t.Run("started on A; read, resubscribed and cancelled on B", func(t *testing.T) {
		onA, onB := a2aClient(t, a.base, "/.well-known/slow.json"), a2aClient(t, b.base, "/.well-known/slow.json")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		stream := a2aEvents(onA.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "go"})}))
		task := nextA2A(t, stream).(*a2a.Task)
		if up, ok := nextA2A(t, stream).(*a2a.TaskArtifactUpdateEvent); !ok || up.Artifact.Parts[0].(a2a.TextPart).Text != "working" {
			t.Fatalf("A's first artifact update = %#v", up)
		}
		got := waitTaskState(t, onB, task.ID, a2a.TaskStateWorking)
		if got.ContextID != task.ContextID {
			t.Fatalf("B reads context %q, want %q", got.ContextID, task.ContextID)
		}
		resub := a2aEvents(onB.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: task.ID}))
		if snap := nextA2A(t, resub).(*a2a.Task); snap.ID != task.ID || snap.Status.State != a2a.TaskStateWorking {
			t.Fatalf("B's resubscription starts with %+v", snap)
		}
		if up, ok := nextA2A(t, resub).(*a2a.TaskArtifactUpdateEvent); !ok || up.Artifact.Parts[0].(a2a.TextPart).Text != "working" {
			t.Fatalf("B catches up with %#v", up)
		}
		canceled, err := onB.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID})
		if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel on B: %+v, %v", canceled, err)
		}
		for name, ch := range map[string]<-chan a2a.Event{"A's stream": stream, "B's resubscription": resub} {
			if st := finalA2A(t, ch); st.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("%s ends %s", name, st.Status.State)
			}
		}
		waitTaskState(t, onB, task.ID, a2a.TaskStateCanceled)
		if _, err := onA.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
			t.Fatalf("cancel again on A: %v", err)
		}
	})

	t.Run("input-required on A, read and answered on B", func(t *testing.T) {
		onA, onB := a2aClient(t, a.base, "/.well-known/publisher.json"), a2aClient(t, b.base, "/.well-known/publisher.json")
		stream := a2aEvents(onA.SendStreamingMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "publish hello"})}))
		task := nextA2A(t, stream).(*a2a.Task)
		if st := finalA2A(t, stream); st.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("A's stream ends %s", st.Status.State)
		}
		waitTaskState(t, onB, task.ID, a2a.TaskStateInputRequired)
		res, err := onB.SendMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.DataPart{Data: map[string]any{"ok": true}})})
		if err != nil {
			t.Fatal(err)
		}
		done := res.(*a2a.Task)
		// The answered task goes on where it stopped: all its text, as
		// tasks/get on either replica reads it.
		if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || a2aText(done) != "Let me ask. Published everywhere." {
			t.Fatalf("answered on B: %+v (%q)", done, a2aText(done))
		}
		if got := waitTaskState(t, onA, task.ID, a2a.TaskStateCompleted); a2aText(got) != "Let me ask. Published everywhere." {
			t.Fatalf("A reads %q", a2aText(got))
		}
	})
}
