package a2a

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
)

// mapper turns the crumbs of one task's run into A2A events: text deltas
// into updates of one text artifact, generated files into file artifacts,
// human:required into an input-required status, human:resumed into a
// working one, agent:run:end into the output's artifact (when the text did
// not already stream it) and a completed status, agent:error into a failed
// (or, for RUN_CANCELLED, canceled) status. Crumbs of other runs (a
// delegated subagent's) are skipped. Artifact ids derive from the task id,
// so a client resubscribing keeps accumulating into the same artifacts.
type mapper struct {
	info  a2a.TaskInfo
	text  bool // the text artifact has started
	files int
	sent  map[string]bool // the URIs of the files already sent
	// answerSchema is the JSON Schema a human tool's answer must match.
	answerSchema func(agentID, tool string) json.RawMessage
}

func newMapper(info a2a.TaskInfo, answerSchema func(agentID, tool string) json.RawMessage) *mapper {
	return &mapper{info: info, answerSchema: answerSchema}
}

func (m *mapper) textArtifact() a2a.ArtifactID {
	return a2a.ArtifactID(string(m.info.TaskID) + "-text")
}

// events maps c. waiting says whether a human:required crumb is the
// task's current state (false when it is replayed from the log and the
// run went on since): only then is its status final. final reports that
// the task reached a state the stream ends on.
func (m *mapper) events(c core.Crumb, waiting bool) (evs []a2a.Event, final bool) {
	run := c.Base().RunID
	mine := run == string(m.info.TaskID)
	switch v := c.(type) {
	case *core.TextDelta:
		if !mine || v.Delta == "" {
			return nil, false
		}
		ev := &a2a.TaskArtifactUpdateEvent{TaskID: m.info.TaskID, ContextID: m.info.ContextID, Append: m.text,
			Artifact: &a2a.Artifact{ID: m.textArtifact(), Name: "output", Parts: a2a.ContentParts{a2a.TextPart{Text: v.Delta}}}}
		m.text = true
		return []a2a.Event{ev}, false
	case *core.FileGenerated:
		if !mine {
			return nil, false
		}
		if m.sent[v.URI] {
			return nil, false
		}
		return []a2a.Event{m.fileArtifact(filePart(v.URI, v.MimeType, v.Name))}, false
	case *core.HumanRequired:
		var answer json.RawMessage
		if v.Kind != core.HumanApproval && m.answerSchema != nil {
			answer = m.answerSchema(v.AgentID, v.ToolName)
		}
		st := m.status(a2a.TaskStateInputRequired, inputRequest(v.CheckpointID, string(v.Kind), v.ToolName, v.Prompt, v.Schema, answer))
		st.Final = waiting
		return []a2a.Event{st}, waiting
	case *core.HumanResumed:
		if !mine {
			return nil, false
		}
		return []a2a.Event{m.status(a2a.TaskStateWorking, nil)}, false
	case *core.AgentRunEnd:
		if !mine {
			return nil, false
		}
		for _, f := range v.Files {
			if !m.sent[f.URI] {
				evs = append(evs, m.fileArtifact(filePart(f.URI, f.MimeType, f.Name)))
			}
		}
		output := decoded(v.Output)
		if _, isText := output.(string); !isText || !m.text {
			if parts := outputParts(output); len(parts) > 0 {
				if fp, ok := parts[0].(a2a.FilePart); ok {
					evs = append(evs, m.fileArtifact(fp))
				} else {
					evs = append(evs, &a2a.TaskArtifactUpdateEvent{TaskID: m.info.TaskID, ContextID: m.info.ContextID,
						Artifact: &a2a.Artifact{ID: a2a.ArtifactID(string(m.info.TaskID) + "-output"), Name: "output", Parts: parts}})
				}
			}
		}
		st := m.status(a2a.TaskStateCompleted, nil)
		st.Final = true
		return append(evs, st), true
	case *core.AgentError:
		if !mine && run != "" {
			return nil, false
		}
		e := v.Error.ClientSafe()
		if e == nil {
			e = &core.BreadError{Code: core.CodeInternalError, Message: "internal server error"}
		}
		state := a2a.TaskStateFailed
		if e.Code == core.CodeRunCancelled {
			state = a2a.TaskStateCanceled
		}
		st := m.status(state, errorMessage(e.Code, e.Message))
		st.Final = true
		return []a2a.Event{st}, true
	}
	return nil, false
}

func (m *mapper) fileArtifact(fp a2a.FilePart) *a2a.TaskArtifactUpdateEvent {
	m.files++
	if m.sent == nil {
		m.sent = map[string]bool{}
	}
	m.sent[fp.File.(a2a.FileURI).URI] = true
	return &a2a.TaskArtifactUpdateEvent{TaskID: m.info.TaskID, ContextID: m.info.ContextID,
		Artifact: &a2a.Artifact{ID: a2a.ArtifactID(string(m.info.TaskID) + "-file-" + strconv.Itoa(m.files)), Name: fp.File.(a2a.FileURI).Name, Parts: a2a.ContentParts{fp}}}
}

func (m *mapper) status(state a2a.TaskState, msg *a2a.Message) *a2a.TaskStatusUpdateEvent {
	now := time.Now().UTC()
	return &a2a.TaskStatusUpdateEvent{TaskID: m.info.TaskID, ContextID: m.info.ContextID, Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: &now}}
}

// inputRequest is the agent message of an input-required status: the
// prompt as text, and what the answer must be as data: the checkpoint id,
// kind, tool, the arguments of the pending call, and the JSON Schema the
// answer is checked against (an approval is answered with
// {"approved": true|false}).
func inputRequest(checkpointID, kind, tool, prompt string, args any, answer json.RawMessage) *a2a.Message {
	if prompt == "" {
		prompt = "Input required for " + tool
	}
	data := map[string]any{"checkpointId": checkpointID, "kind": kind, "toolName": tool}
	if kind == string(core.HumanApproval) {
		data["answerSchema"] = map[string]any{"type": "object", "properties": map[string]any{"approved": map[string]any{"type": "boolean"}, "reason": map[string]any{"type": "string"}}, "required": []any{"approved"}}
	} else if len(answer) > 0 {
		data["answerSchema"] = answer
	}
	if a := core.OptionalJSON(args); a != nil {
		data["args"] = a
	}
	msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.TextPart{Text: prompt}, a2a.DataPart{Data: data})
	return msg
}

// errorMessage is the agent message of a failed status: the bread code and
// message, client-safe.
func errorMessage(code, message string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleAgent, a2a.TextPart{Text: code + ": " + message}, a2a.DataPart{Data: map[string]any{"code": code, "message": message}})
}

// decoded is a crumb's payload as a Go value whatever its source: a crumb
// read back from a SQL crumb log or relayed over a bus carries its payloads
// as raw JSON, the memory store and a live run as the values the engine
// made. Numbers keep their digits (json.Number). Raw JSON that does not
// parse is left as it is.
func decoded(v any) any {
	raw, ok := v.(json.RawMessage)
	if !ok {
		return v
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var out any
	if d.Decode(&out) != nil || d.More() {
		return v
	}
	return out
}

// apply folds an event into a task snapshot: the latest status, the
// artifacts accumulated by id.
func apply(t *a2a.Task, ev a2a.Event) {
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		t.Status = v.Status
	case *a2a.TaskArtifactUpdateEvent:
		for _, a := range t.Artifacts {
			if a.ID == v.Artifact.ID {
				if v.Append {
					a.Parts = appendParts(a.Parts, v.Artifact.Parts)
				} else {
					a.Parts = append(a2a.ContentParts(nil), v.Artifact.Parts...)
				}
				return
			}
		}
		cp := *v.Artifact
		cp.Parts = append(a2a.ContentParts(nil), v.Artifact.Parts...)
		t.Artifacts = append(t.Artifacts, &cp)
	}
}

// appendParts appends more to parts, merging a text part into a trailing
// text part so an artifact streamed in deltas reads as one text.
func appendParts(parts, more a2a.ContentParts) a2a.ContentParts {
	for _, p := range more {
		if tp, ok := p.(a2a.TextPart); ok && len(parts) > 0 {
			if last, ok := parts[len(parts)-1].(a2a.TextPart); ok {
				last.Text += tp.Text
				parts[len(parts)-1] = last
				continue
			}
		}
		parts = append(parts, p)
	}
	return parts
}
