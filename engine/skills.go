package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/typed"
)

func skillNotFound(a *agentRT, id string) *core.BreadError {
	ids := make([]string, len(a.Skills))
	for i, s := range a.Skills {
		ids[i] = s.ID
	}
	return &core.BreadError{
		Code:    core.CodeSkillNotFound,
		Message: "agent " + a.ID + " has no skill " + quoteTruncated(id),
		Context: map[string]any{"agentId": a.ID, "skill": id, "available": ids},
	}
}

// activateSkill marks a skill active for the rest of the run. It is safe for
// concurrent tool calls.
func (r *run) activateSkill(id string) {
	r.mu.Lock()
	if r.skills == nil {
		r.skills = map[string]bool{}
	}
	r.skills[id] = true
	r.mu.Unlock()
}

func (r *run) skillCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.skills)
}

func (r *run) activeSkills() []*core.Skill {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*core.Skill
	for i := range r.agent.Skills {
		if s := &r.agent.Skills[i]; r.skills[s.ID] {
			out = append(out, s)
		}
	}
	return out
}

// restoreLoadedSkills re-activates the skills the model loaded earlier in the
// session, so a resumed or continued run keeps their tools: the history, not
// memory, is the record of what was loaded.
func (r *run) restoreLoadedSkills(history []core.Message) {
	if len(r.agent.Skills) == 0 {
		return
	}
	for _, m := range history {
		for _, p := range m.Parts {
			if p.Type != core.PartToolCall || p.ToolName != loadSkillTool {
				continue
			}
			var args struct {
				SkillID string `json:"skillId"`
			}
			if json.Unmarshal(p.Input, &args) == nil {
				if _, ok := r.agent.Skill(args.SkillID); ok {
					r.activateSkill(args.SkillID)
				}
			}
		}
	}
}

// skillPrompt is the part of the system prompt a skill adds when active.
func skillPrompt(s *core.Skill) string {
	var b strings.Builder
	b.WriteString("## Skill: ")
	b.WriteString(cmpOr(s.Name, s.ID))
	b.WriteString("\n\n")
	b.WriteString(strings.TrimSpace(s.Instructions))
	for _, ref := range s.References {
		b.WriteString("\n\n### Reference: ")
		b.WriteString(ref.Name)
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(ref.Content))
	}
	return b.String()
}

// skillsSummary tells the model which skills it can load.
func skillsSummary(skills []core.Skill) string {
	lines := []string{"## Available Skills", "Call the `core_load_skill` tool with a `skillId` to load a skill's full instructions (and its tools) before using it."}
	for _, s := range skills {
		lines = append(lines, "- "+s.ID+": "+cmpOr(s.Description, s.Name))
	}
	return strings.Join(lines, "\n")
}

const loadSkillTool = "core_load_skill"

type loadSkillArgs struct {
	SkillID string `json:"skillId" jsonschema:"description=The id of the skill to load"`
}

// loadSkillToolFor builds core_load_skill for a run: it returns the skill's
// instructions and references and activates its tools for the next turns.
func (r *run) loadSkillToolFor() core.Tool {
	t := typed.DefineTool("load_skill", "Load the full instructions of one of your available skills by id; its tools become available.",
		func(_ context.Context, a loadSkillArgs, _ core.ToolContext) (map[string]any, error) {
			s, ok := r.agent.Skill(a.SkillID)
			if !ok {
				return nil, skillNotFound(r.agent, a.SkillID)
			}
			r.activateSkill(s.ID)
			out := map[string]any{"name": cmpOr(s.Name, s.ID), "instructions": s.Instructions}
			if len(s.References) > 0 {
				out["references"] = s.References
			}
			if len(s.Tools) > 0 {
				names := make([]string, len(s.Tools))
				for i, t := range s.Tools {
					names[i] = core.LeafName(core.ToolOrigin{Scope: core.ScopeSkill, Sub: s.ID, Name: t.Name})
				}
				slices.Sort(names)
				out["tools"] = names
			}
			return out, nil
		})
	return t
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
