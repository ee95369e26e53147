package project

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/breadai/bread/core"
)

// loadSkills reads skills/<id>/SKILL.md (flat name/description frontmatter
// and the instructions), references/*.md and scripts/*.yaml.
func (l *loader) loadSkills(dir string) ([]core.Skill, error) {
	skillDirs, err := subdirs(dir)
	if err != nil {
		return nil, errorAt(l.rel(dir), 0, err)
	}
	var skills []core.Skill
	for _, skillDir := range skillDirs {
		name := filepath.Base(skillDir)
		mdPath := filepath.Join(skillDir, "SKILL.md")
		if err := core.ValidateName("skill", name); err != nil {
			return nil, errorAt(l.rel(skillDir), 0, err)
		}
		raw, err := os.ReadFile(mdPath)
		if err != nil {
			return nil, errorAt(l.rel(mdPath), 0, err)
		}
		meta, body, err := frontmatter(string(raw))
		if err != nil {
			return nil, errorAt(l.rel(mdPath), 1, err)
		}
		s := core.Skill{ID: name, Name: meta["name"], Description: meta["description"], Instructions: strings.TrimSpace(body)}
		if s.References, err = l.references(filepath.Join(skillDir, "references")); err != nil {
			return nil, err
		}
		if s.Tools, _, err = l.loadTools(filepath.Join(skillDir, "scripts"), skillDir); err != nil {
			return nil, err
		}
		skills = append(skills, s)
	}
	return skills, nil
}

// frontmatter splits flat `key: value` frontmatter between --- lines from
// the body. A file without frontmatter is all body.
func frontmatter(s string) (map[string]string, string, error) {
	meta := map[string]string{}
	s = strings.TrimLeft(s, "\ufeff")
	if !strings.HasPrefix(s, "---") {
		return meta, s, nil
	}
	rest := strings.TrimPrefix(s, "---")
	rest = strings.TrimLeft(rest, "\r")
	if !strings.HasPrefix(rest, "\n") {
		return meta, s, nil
	}
	head, body, ok := strings.Cut(rest[1:], "\n---")
	if !ok {
		return nil, "", core.Errorf(core.CodeInvalidConfig, "frontmatter opened with --- is never closed")
	}
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, "", core.Errorf(core.CodeInvalidConfig, "frontmatter line %q is not `key: value`", line)
		}
		meta[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	body = strings.TrimPrefix(body, "\r")
	body = strings.TrimPrefix(body, "\n")
	return meta, body, nil
}

func (l *loader) references(dir string) ([]core.SkillReference, error) {
	paths, err := filesWithSuffix(dir, ".md")
	if err != nil {
		return nil, errorAt(l.rel(dir), 0, err)
	}
	var refs []core.SkillReference
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, errorAt(l.rel(path), 0, err)
		}
		refs = append(refs, core.SkillReference{Name: filepath.Base(path), Content: string(b)})
	}
	return refs, nil
}
