package agui_test

import (
	"encoding/json"
	"fmt"
	"testing"
)

// verify checks the ordering rules an AG-UI client enforces on a stream
// (the TypeScript client's verify step): a run opens with RUN_STARTED (or
// fails at once with RUN_ERROR); nothing but a new RUN_STARTED follows
// RUN_FINISHED, nothing at all follows RUN_ERROR; message content and tool
// arguments arrive only inside their open message or call; a step finishes
// only once started; a run finishes with no message, tool call or step
// open.
func verify(evs []map[string]any) error {
	var (
		running, errored, seen bool
		msgs                   = map[string]bool{}
		calls                  = map[string]bool{}
		steps                  = map[string]int{}
	)
	open := func() int {
		n := len(msgs) + len(calls)
		for _, c := range steps {
			n += c
		}
		return n
	}
	for i, e := range evs {
		typ, _ := e["type"].(string)
		str := func(k string) string { s, _ := e[k].(string); return s }
		if errored {
			return fmt.Errorf("event %d %s after RUN_ERROR", i, typ)
		}
		if !running && typ != "RUN_STARTED" && !(typ == "RUN_ERROR" && !seen) {
			return fmt.Errorf("event %d %s outside a run", i, typ)
		}
		seen = true
		switch typ {
		case "RUN_STARTED":
			if running {
				return fmt.Errorf("event %d: RUN_STARTED inside a run", i)
			}
			if str("threadId") == "" || str("runId") == "" {
				return fmt.Errorf("event %d: RUN_STARTED without threadId/runId", i)
			}
			running = true
		case "RUN_FINISHED":
			if n := open(); n > 0 {
				return fmt.Errorf("event %d: RUN_FINISHED with %d messages/calls/steps open", i, n)
			}
			running = false
		case "RUN_ERROR":
			errored, running = true, false
		case "REASONING_START", "REASONING_MESSAGE_START":
			if msgs[str("messageId")] {
				return fmt.Errorf("event %d: reasoning %s started twice", i, str("messageId"))
			}
			msgs[str("messageId")] = true
		case "REASONING_MESSAGE_CONTENT":
			if !msgs[str("messageId")] || str("delta") == "" {
				return fmt.Errorf("event %d: empty or misplaced reasoning content for %s", i, str("messageId"))
			}
		case "REASONING_MESSAGE_END", "REASONING_END":
			if !msgs[str("messageId")] {
				return fmt.Errorf("event %d: end of closed reasoning %s", i, str("messageId"))
			}
			delete(msgs, str("messageId"))
		case "TEXT_MESSAGE_START":
			if msgs[str("messageId")] {
				return fmt.Errorf("event %d: message %s started twice", i, str("messageId"))
			}
			msgs[str("messageId")] = true
		case "TEXT_MESSAGE_CONTENT":
			if !msgs[str("messageId")] {
				return fmt.Errorf("event %d: content for closed message %s", i, str("messageId"))
			}
		case "TEXT_MESSAGE_END":
			if !msgs[str("messageId")] {
				return fmt.Errorf("event %d: end of closed message %s", i, str("messageId"))
			}
			delete(msgs, str("messageId"))
		case "TOOL_CALL_START":
			if calls[str("toolCallId")] {
				return fmt.Errorf("event %d: tool call %s started twice", i, str("toolCallId"))
			}
			calls[str("toolCallId")] = true
		case "TOOL_CALL_ARGS":
			if !calls[str("toolCallId")] {
				return fmt.Errorf("event %d: args for closed tool call %s", i, str("toolCallId"))
			}
		case "TOOL_CALL_END":
			if !calls[str("toolCallId")] {
				return fmt.Errorf("event %d: end of closed tool call %s", i, str("toolCallId"))
			}
			delete(calls, str("toolCallId"))
		case "STEP_STARTED":
			steps[str("stepName")]++
		case "STEP_FINISHED":
			if steps[str("stepName")] == 0 {
				return fmt.Errorf("event %d: step %s finished but not started", i, str("stepName"))
			}
			if steps[str("stepName")]--; steps[str("stepName")] == 0 {
				delete(steps, str("stepName"))
			}
		}
	}
	return nil
}

func TestVerifyRefusesBrokenSequences(t *testing.T) {
	tests := []struct {
		name string
		evs  string
	}{
		{"no RUN_STARTED", `[{"type":"TEXT_MESSAGE_START","messageId":"m"}]`},
		{"content outside a message", `[{"type":"RUN_STARTED","threadId":"t","runId":"r"},{"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}]`},
		{"finished with an open message", `[{"type":"RUN_STARTED","threadId":"t","runId":"r"},{"type":"TEXT_MESSAGE_START","messageId":"m"},{"type":"RUN_FINISHED"}]`},
		{"finished with an open step", `[{"type":"RUN_STARTED","threadId":"t","runId":"r"},{"type":"STEP_STARTED","stepName":"s"},{"type":"RUN_FINISHED"}]`},
		{"step finished twice", `[{"type":"RUN_STARTED","threadId":"t","runId":"r"},{"type":"STEP_STARTED","stepName":"s"},{"type":"STEP_FINISHED","stepName":"s"},{"type":"STEP_FINISHED","stepName":"s"}]`},
		{"args outside a call", `[{"type":"RUN_STARTED","threadId":"t","runId":"r"},{"type":"TOOL_CALL_ARGS","toolCallId":"c"}]`},
		{"event after RUN_ERROR", `[{"type":"RUN_STARTED","threadId":"t","runId":"r"},{"type":"RUN_ERROR"},{"type":"RUN_STARTED","threadId":"t","runId":"r"}]`},
		{"event after RUN_FINISHED", `[{"type":"RUN_STARTED","threadId":"t","runId":"r"},{"type":"RUN_FINISHED"},{"type":"STEP_STARTED","stepName":"s"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evs []map[string]any
			if err := json.Unmarshal([]byte(tt.evs), &evs); err != nil {
				t.Fatal(err)
			}
			if verify(evs) == nil {
				t.Errorf("verify accepted %s", tt.evs)
			}
		})
	}
}
