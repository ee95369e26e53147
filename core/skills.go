package core

// Skill is a reusable bundle of instructions, reference material and tools.
// The caller activates one for a run (RunOptions.Skill): its instructions and
// references join the system prompt and its tools (skill_<id>_<name>) join
// the toolset. An agent with skills also gets a summary of them in its prompt
// and the core_load_skill tool, so the model can activate one mid-run.
//
// The loader builds skills from agents/<id>/skills/<skill>/ (SKILL.md with
// flat name/description frontmatter, references/*.md, scripts/*.yaml).
type Skill struct {
	// ID names the skill (lowercase snake_case); it is the skill's folder.
	ID          string
	Name        string
	Description string
	// Instructions is the SKILL.md body.
	Instructions string
	References   []SkillReference
	Tools        []Tool
}

// SkillReference is supporting material inlined with a skill.
type SkillReference struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// Skill returns the agent's skill with that id.
func (a *Agent) Skill(id string) (*Skill, bool) {
	for i := range a.Skills {
		if a.Skills[i].ID == id {
			return &a.Skills[i], true
		}
	}
	return nil, false
}
