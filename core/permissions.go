package core

import (
	"regexp"
	"strings"
)

// ToolScope is where a tool comes from. The scope decides its model-facing
// name and which permission selectors can address it.
type ToolScope string

// The tool scopes.
const (
	ScopeTool   ToolScope = "tool"   // the agent's own tools
	ScopeSkill  ToolScope = "skill"  // a skill's script tools (sub = skill)
	ScopeTask   ToolScope = "task"   // one-shot task tools
	ScopePlugin ToolScope = "plugin" // plugin tools (sub = plugin)
	ScopeCore   ToolScope = "core"   // built-ins: core_delegate, core_kg_*, ...
	ScopeHuman  ToolScope = "human"  // human tools; never gated by permissions
	// ScopeClient is a tool the run's client declared (ClientInput.Tools):
	// the model sees its own name, unprefixed, since the client matches
	// calls by it; like a human tool it is never gated by permissions (it
	// only asks the client, who could say the same in a message).
	ScopeClient ToolScope = "client"
)

func hasSub(s ToolScope) bool { return s == ScopeSkill || s == ScopePlugin }

// ToolOrigin is a tool's structured provenance: its scope, the skill or
// plugin that contributed it (Sub), and its own name.
type ToolOrigin struct {
	Scope ToolScope
	Sub   string
	Name  string
}

// LeafName is the name the model sees: scope_name, or scope_sub_name for
// skill and plugin tools (tool_web_search, plugin_mcp_client_fs__read),
// and a client tool's own name.
func LeafName(o ToolOrigin) string {
	if o.Scope == ScopeClient {
		return o.Name
	}
	if hasSub(o.Scope) {
		return string(o.Scope) + "_" + o.Sub + "_" + o.Name
	}
	return string(o.Scope) + "_" + o.Name
}

// PermID is the id permission selectors match: scope:name, or
// scope:sub/name for skill and plugin tools.
func PermID(o ToolOrigin) string {
	if hasSub(o.Scope) {
		return string(o.Scope) + ":" + o.Sub + "/" + o.Name
	}
	return string(o.Scope) + ":" + o.Name
}

// Permissions gate an agent's tools with selector lists. The tools the agent
// may call are (Allow ∪ Ask) − Deny: deny beats everything, ask beats allow
// (a tool in both is gated, not free), and an empty Allow means every tool.
// A gated tool suspends the run for a human's approval on every call. Human
// tools are exempt and may not appear in any list.
//
// A selector is scope:name or, for skill and plugin, scope:sub/name. A bare
// * globs a whole segment (plugin:mcp_client/*, skill:*, core:*); a * inside
// a segment matches zero or more of [a-z0-9_] (tool:read_*, tool:get_*_by_id).
type Permissions struct {
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Selector is a parsed permission selector.
type Selector struct {
	Scope ToolScope
	Sub   string // only for skill and plugin; may hold *
	Name  string // may hold *
	sub   *regexp.Regexp
	name  *regexp.Regexp
}

var segmentPattern = regexp.MustCompile(`^(\*|[a-z])[a-z0-9_*]*$`)

// ParseSelector parses one selector; a malformed one is INVALID_PERMISSION,
// so a typo in a deny list fails the boot instead of silently allowing.
func ParseSelector(s string) (Selector, error) {
	fail := func(reason string) (Selector, error) {
		return Selector{}, &BreadError{
			Code:    CodeInvalidPermission,
			Message: "invalid permission selector " + quoteTruncated(s) + ": " + reason,
			Context: map[string]any{"selector": s},
		}
	}
	scopeText, rest, ok := strings.Cut(s, ":")
	if !ok {
		return fail(`selectors are scoped ("tool:name"); a bare "*" is not a selector`)
	}
	scope := ToolScope(scopeText)
	switch scope {
	case ScopeTool, ScopeSkill, ScopeTask, ScopePlugin, ScopeCore:
	case ScopeHuman:
		return fail("human tools are exempt from permissions and cannot be selected")
	case ScopeClient:
		return fail("client tools are exempt from permissions and cannot be selected")
	default:
		return fail("unknown scope " + quoteTruncated(scopeText) + " (expected tool, skill, task, plugin or core)")
	}
	if rest == "" {
		return fail("missing name after the scope")
	}
	sel := Selector{Scope: scope}
	if rest == "*" {
		sel.Name = "*"
		if hasSub(scope) {
			sel.Sub = "*"
		}
		return sel.compile(), nil
	}
	sub, name, nested := strings.Cut(rest, "/")
	switch {
	case !nested && hasSub(scope):
		return fail(`scope "` + scopeText + `" needs a sub-id ("` + scopeText + `:id/name") or "` + scopeText + `:*"`)
	case nested && !hasSub(scope):
		return fail(`scope "` + scopeText + `" takes no sub-id; use "` + scopeText + `:name"`)
	case !nested:
		name = rest
	case strings.Contains(name, "/"):
		return fail(`a selector takes at most one "/"`)
	default:
		if !segmentPattern.MatchString(sub) {
			return fail("invalid sub-id segment " + quoteTruncated(sub))
		}
		sel.Sub = sub
	}
	if !segmentPattern.MatchString(name) {
		return fail("invalid name segment " + quoteTruncated(name))
	}
	sel.Name = name
	return sel.compile(), nil
}

func (s Selector) compile() Selector {
	s.sub = globPattern(s.Sub)
	s.name = globPattern(s.Name)
	return s
}

// globPattern turns a segment with * into a regexp; nil means "match
// literally".
func globPattern(seg string) *regexp.Regexp {
	if !strings.Contains(seg, "*") {
		return nil
	}
	parts := strings.Split(seg, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, "[a-z0-9_]*") + "$")
}

// Matches reports whether the selector addresses o.
func (s Selector) Matches(o ToolOrigin) bool {
	return s.Scope == o.Scope && segMatch(s.Sub, s.sub, o.Sub) && segMatch(s.Name, s.name, o.Name)
}

func segMatch(lit string, re *regexp.Regexp, v string) bool {
	if re != nil {
		return re.MatchString(v)
	}
	return lit == v
}

// CompiledPermissions are permissions parsed once, at load, so each tool
// decision is a match and not a parse. Build them with Permissions.Compile.
type CompiledPermissions struct {
	allow, ask, deny []Selector
}

// Compile parses every selector of p. A malformed selector is
// INVALID_PERMISSION naming it.
func (p Permissions) Compile() (CompiledPermissions, error) {
	var cp CompiledPermissions
	for _, l := range []struct {
		in  []string
		out *[]Selector
	}{{p.Allow, &cp.allow}, {p.Ask, &cp.ask}, {p.Deny, &cp.deny}} {
		for _, s := range l.in {
			sel, err := ParseSelector(s)
			if err != nil {
				return cp, err
			}
			*l.out = append(*l.out, sel)
		}
	}
	return cp, nil
}

// Access is what permissions decide for one tool.
type Access uint8

// The access decisions.
const (
	Denied Access = iota
	Allowed
	Gated // allowed, but every call waits for a human's approval
)

// Decide says what the permissions allow for the tool o: deny wins over
// ask, ask over allow, and an empty allow list allows everything. Human
// tools are always allowed.
func (cp CompiledPermissions) Decide(o ToolOrigin) Access {
	if o.Scope == ScopeHuman || o.Scope == ScopeClient {
		return Allowed
	}
	anyMatch := func(sels []Selector) bool {
		for _, s := range sels {
			if s.Matches(o) {
				return true
			}
		}
		return false
	}
	if anyMatch(cp.deny) {
		return Denied
	}
	if anyMatch(cp.ask) {
		return Gated
	}
	if len(cp.allow) == 0 || anyMatch(cp.allow) {
		return Allowed
	}
	return Denied
}

// Decide applies p to a tool. A malformed selector is an error.
func (p Permissions) Decide(o ToolOrigin) (Access, error) {
	cp, err := p.Compile()
	if err != nil {
		return Denied, err
	}
	return cp.Decide(o), nil
}
