package a2ui

import (
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
)

// Map returns the specs of one crumb: none for a crumb with no component
// (tool:input:*, tool:result:partial), two for an agent:run:end whose
// output is a file reference (the file first, then the progress). Map is
// stateless and safe for concurrent use. Metadata carries results, outputs
// and answers as the crumb has them: redact before showing them if they
// are sensitive.
func Map(c core.Crumb) []Spec {
	switch v := c.(type) {
	case *core.AgentRunStart:
		return one(Spec{Type: Progress, Progress: pct(0), Message: "Agent " + v.AgentID + " started"})
	case *core.AgentRunEnd:
		done := Spec{Type: Progress, Progress: pct(1), Message: "Done"}
		if f, ok := core.AsFileOutput(v.Output); ok {
			return []Spec{fileSpec(f), done}
		}
		return one(done)
	case *core.AgentError:
		return one(Spec{Type: Error, Message: errorMessage(v.Error)})
	case *core.TextDelta:
		return one(Spec{Type: Markdown, Content: v.Delta})
	case *core.ReasoningDelta:
		return one(Spec{Type: Text, Content: v.Delta})
	case *core.FileGenerated:
		return one(fileSpec(core.FileOutput{URI: v.URI, MimeType: v.MimeType, Name: v.Name}))
	case *core.ToolCall:
		return one(Spec{Type: Card, Metadata: map[string]any{"toolName": v.ToolName, "status": "calling"}})
	case *core.ToolResult:
		return one(Spec{Type: Card, Metadata: map[string]any{"toolName": v.ToolName, "status": "done", "result": v.Result, "durationMs": v.DurationMs}})
	case *core.ToolError:
		return one(Spec{Type: Error, Message: errorMessage(v.Error), Metadata: map[string]any{"toolName": v.ToolName, "toolCallId": v.ToolCallID, "durationMs": v.DurationMs}})
	case *core.HumanRequired:
		msg := v.Prompt
		if msg == "" {
			msg = "Input required for " + v.ToolName
		}
		return one(Spec{Type: Form, Message: msg,
			Fields:   []Field{{Name: "response", Type: "text", Label: "Response", Required: true}},
			Metadata: map[string]any{"checkpointId": v.CheckpointID, "toolName": v.ToolName}})
	case *core.HumanResumed:
		return one(Spec{Type: Progress, Progress: pct(1), Message: "Human input received",
			Metadata: map[string]any{"checkpointId": v.CheckpointID, "kind": v.Kind, "response": v.Response}})
	case *core.SubagentRunStart:
		return one(Spec{Type: Progress, Progress: pct(0), Message: "Sub-agent " + v.SubagentID + " started",
			Metadata: map[string]any{"parentAgentId": v.ParentAgentID, "subagentId": v.SubagentID}})
	case *core.SubagentRunEnd:
		return one(Spec{Type: Progress, Progress: pct(1), Message: "Sub-agent " + v.SubagentID + " done",
			Metadata: map[string]any{"parentAgentId": v.ParentAgentID, "subagentId": v.SubagentID, "output": v.Output}})
	case *core.PipelineStepStart:
		return one(Spec{Type: Progress, Progress: pct(0), Message: "Pipeline step " + strconv.Itoa(v.StepIndex) + " started",
			Metadata: map[string]any{"pipelineId": v.PipelineID, "stepIndex": v.StepIndex}})
	case *core.PipelineStepEnd:
		return one(Spec{Type: Progress, Progress: pct(1), Message: "Pipeline step " + strconv.Itoa(v.StepIndex) + " done",
			Metadata: map[string]any{"pipelineId": v.PipelineID, "stepIndex": v.StepIndex, "output": v.Output}})
	case *core.LoopStart:
		return one(Spec{Type: Progress, Progress: pct(0), Message: "Loop started: " + strings.Join(v.Pipeline, " → "),
			Metadata: map[string]any{"loopId": v.LoopID, "maxIterations": v.MaxIterations}})
	case *core.LoopIterationStart:
		return one(Spec{Type: Progress, Message: "Iteration " + strconv.Itoa(v.Iteration),
			Metadata: map[string]any{"loopId": v.LoopID, "iteration": v.Iteration}})
	case *core.LoopIterationEnd:
		return one(Spec{Type: Progress, Message: "Iteration " + strconv.Itoa(v.Iteration) + " done",
			Metadata: map[string]any{"loopId": v.LoopID, "iteration": v.Iteration, "output": v.Output}})
	case *core.LoopEnd:
		return one(Spec{Type: Progress, Progress: pct(1), Message: "Loop " + string(v.Status) + " after " + strconv.Itoa(v.Iterations) + " iteration(s)",
			Metadata: map[string]any{"loopId": v.LoopID, "status": v.Status}})
	case *core.TaskStart:
		return one(Spec{Type: Progress, Progress: pct(0), Message: "Task " + v.TaskID + " started",
			Metadata: map[string]any{"taskRunId": v.TaskRunID, "taskId": v.TaskID, "model": v.Model}})
	case *core.TaskEnd:
		md := map[string]any{"taskRunId": v.TaskRunID, "taskId": v.TaskID, "status": v.Status, "durationMs": v.DurationMs}
		if v.Usage != nil {
			md["usage"] = v.Usage
		}
		if v.Error != "" {
			md["error"] = v.Error
		}
		return one(Spec{Type: Progress, Progress: pct(1), Message: "Task " + v.TaskID + " " + string(v.Status), Metadata: md})
	}
	return nil
}

func one(s Spec) []Spec { return []Spec{s} }

func pct(f float64) *float64 { return &f }

// errorMessage is the client-safe message of a crumb's error.
func errorMessage(e *core.BreadError) string {
	if e == nil {
		return "internal server error"
	}
	return e.Message
}

func fileSpec(f core.FileOutput) Spec {
	md := map[string]any{"uri": f.URI, "mimeType": f.MimeType}
	if f.Name != "" {
		md["name"] = f.Name
	}
	return Spec{Type: File, Metadata: md}
}
