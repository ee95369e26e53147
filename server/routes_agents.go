package server

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// agentView is what the API shows of an agent: its id, description, model,
// output format and input schema. Settings and provider options stay
// private (they can hold endpoints or keys).
type agentView struct {
	ID           string          `json:"id"`
	Description  string          `json:"description,omitempty"`
	Model        modelView       `json:"model"`
	OutputFormat string          `json:"outputFormat"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	// HumanTools are the questions the agent may put to a human: what a
	// client needs to render the answer form of a human:required crumb
	// (whose schema is the model's request).
	HumanTools []humanToolView `json:"humanTools,omitempty"`
}

// humanToolView is a human tool as the model calls it (human_<name>).
type humanToolView struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Prompt      string          `json:"prompt,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

type modelView struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

func viewAgent(a *core.Agent) agentView {
	format := a.Output.Format
	if format == "" {
		format = core.FormatText
	}
	v := agentView{ID: a.ID, Description: a.Description, Model: modelView{Provider: a.Model.Provider, Model: a.Model.Model}, OutputFormat: format}
	if json.Valid(a.InputSchema) {
		v.InputSchema = a.InputSchema
	}
	for _, h := range a.HumanTools {
		hv := humanToolView{Name: core.LeafName(core.ToolOrigin{Scope: core.ScopeHuman, Name: h.Name}), Description: h.Description, Prompt: h.Prompt}
		if json.Valid(h.Schema) {
			hv.Schema = h.Schema
		}
		v.HumanTools = append(v.HumanTools, hv)
	}
	return v
}

func (s *Server) listAgents(w http.ResponseWriter, _ *http.Request) {
	agents := s.inst.Agents()
	out := make([]agentView, 0, len(agents))
	for _, a := range agents {
		if s.inst.Entrypoint(a.ID) { // agents internal to compositions stay unlisted
			out = append(out, viewAgent(a))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) readAgent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, ok := s.inst.Agent(id)
	if !ok || !s.inst.Entrypoint(id) {
		writeError(w, http.StatusNotFound, core.CodeAgentNotFound, "agent "+quote(id)+" not found")
		return
	}
	writeJSON(w, http.StatusOK, viewAgent(a))
}

// pipelineView is what GET /pipelines shows of a pipeline: its id, a
// description made of its steps' agents, the steps, and the input schema
// of its first agent (the pipeline's input is that agent's).
type pipelineView struct {
	ID          string              `json:"id"`
	Description string              `json:"description"`
	Steps       []core.PipelineStep `json:"steps"`
	InputSchema json.RawMessage     `json:"inputSchema,omitempty"`
}

func (s *Server) listPipelines(w http.ResponseWriter, _ *http.Request) {
	pipelines := s.inst.Pipelines()
	out := make([]pipelineView, 0, len(pipelines))
	for _, id := range slices.Sorted(maps.Keys(pipelines)) {
		steps := pipelines[id]
		v := pipelineView{ID: id, Steps: nonNil(steps), Description: describeSteps(steps)}
		if first := firstAgent(steps); first != "" {
			if a, ok := s.inst.Agent(first); ok && json.Valid(a.InputSchema) {
				v.InputSchema = a.InputSchema
			}
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// describeSteps renders steps as "a → b → (c | d)": sequential steps with
// arrows, nested steps in parentheses, route targets as alternatives.
func describeSteps(steps []core.PipelineStep) string {
	parts := make([]string, 0, len(steps))
	for _, st := range steps {
		switch {
		case st.AgentID != "":
			parts = append(parts, st.AgentID)
		case len(st.Steps) > 0:
			sep := " → "
			if st.Type == core.StepParallel {
				sep = " ‖ "
			}
			inner := make([]string, 0, len(st.Steps))
			for _, in := range st.Steps {
				inner = append(inner, describeSteps([]core.PipelineStep{in}))
			}
			parts = append(parts, "("+strings.Join(inner, sep)+")")
		case len(st.Routes) > 0:
			parts = append(parts, "("+strings.Join(slices.Sorted(maps.Values(st.Routes)), " | ")+")")
		default:
			parts = append(parts, string(st.Type))
		}
	}
	return strings.Join(parts, " → ")
}

// firstAgent is the agent a pipeline's input reaches first, or "": the
// first step's agent, or the first agent of its nested steps.
func firstAgent(steps []core.PipelineStep) string {
	if len(steps) == 0 {
		return ""
	}
	if st := steps[0]; st.AgentID != "" {
		return st.AgentID
	}
	return firstAgent(steps[0].Steps)
}
