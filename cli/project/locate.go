package project

import (
	"errors"
	"regexp"
	"strings"

	"github.com/breadai/bread/core"
)

// fieldPath splits an engine Config path (a *core.BreadError's Context
// "field") into the agent it is about, if any, and the rest:
// Agents[id="a"].Permissions.Ask[0] is agent a and Permissions.Ask[0].
var fieldPath = regexp.MustCompile(`^Agents\[id="([^"]+)"\]\.(.+)$`)

// Locate puts an error the engine found after loading (a permission
// selector matching no plugin tool, a loop or supervisor setting it
// refuses) at its file and line, from the Config path the engine names in
// the error's Context "field": Agents[id="a"].Permissions.Ask[0] is the
// line of permissions.ask[0] in agents/a/agent.yaml, Pipelines["p"][1].AgentID
// that of pipelines.p[1].agentId in bread.yaml. An error already located,
// without a field, or about an agent that has no agent.yaml (one added from
// Go) is returned as it is.
func (p *Project) Locate(err error) error {
	var located *Error
	var be *core.BreadError
	if err == nil || errors.As(err, &located) || !errors.As(err, &be) {
		return err
	}
	field, _ := be.Context["field"].(string)
	if field == "" {
		return err
	}
	rel, path := "bread.yaml", field
	if m := fieldPath.FindStringSubmatch(field); m != nil {
		rel, path = "agents/"+m[1]+"/agent.yaml", m[2]
	}
	f, ok := p.files[rel]
	if !ok {
		return err
	}
	yamlPath := "$." + yamlField(path)
	// The deepest part of the path that is in the file: a field the file
	// leaves to its default has no line of its own, its parent does.
	for {
		if line := f.line(yamlPath); line > 0 {
			return &Error{File: rel, Line: line, Err: be}
		}
		cut := strings.LastIndexAny(yamlPath, ".[")
		if cut <= 1 {
			return &Error{File: rel, Err: be}
		}
		yamlPath = yamlPath[:cut]
	}
}

// yamlField turns a Config path into a YAML path: each field name loses its
// Go capital (AgentID is agentId), a map key in brackets becomes a field
// (Pipelines["p"][1] is pipelines.p[1]).
func yamlField(path string) string {
	var b strings.Builder
	for i, part := range strings.Split(path, ".") {
		if i > 0 {
			b.WriteByte('.')
		}
		name, rest, _ := strings.Cut(part, "[")
		if rest != "" {
			rest = "[" + rest
		}
		if key, after, ok := strings.Cut(rest, `"]`); ok && strings.HasPrefix(key, `["`) {
			rest = "." + key[2:] + after
		}
		switch name {
		case "AgentID":
			name = "agentId"
		case "":
		default:
			name = strings.ToLower(name[:1]) + name[1:]
		}
		b.WriteString(name + rest)
	}
	return b.String()
}

// At returns err at the line of a YAML path ("$.model.provider") of a
// project file ("agents/a/agent.yaml"); at the file alone when the path is
// not in it, and unchanged when the file was not loaded (an agent added
// from Go).
func (p *Project) At(rel, path string, err error) error {
	f, ok := p.files[rel]
	if !ok {
		return err
	}
	return f.errAt(path, err)
}
