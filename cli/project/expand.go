package project

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

var varPattern = regexp.MustCompile(`\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// varMark starts the placeholder a ${VAR} reference becomes before YAML
// parsing: letters, digits and underscores only, so it is a plain scalar
// in every context (a flow mapping, a flow sequence, a quoted string) and
// cannot change the document's structure, whatever the variable holds.
// A file that already spells it gets a longer one (see protect).
const varMark = "__bread_var_"

// varRef is one ${VAR}, ${VAR:-default} or $${ in a project file.
type varRef struct {
	literal bool // $${: a literal ${
	name    string
	def     string
	hasDef  bool
	line    int
}

// protect replaces each variable reference of src with a placeholder
// (mark, its index, "__") and returns the references in order and the
// mark, one the file does not spell. Lines are unchanged.
func protect(src []byte) ([]byte, []varRef, string) {
	mark := varMark
	for bytes.Contains(src, []byte(mark)) {
		mark += "x_"
	}
	var refs []varRef
	var out bytes.Buffer
	last := 0
	for _, m := range varPattern.FindAllSubmatchIndex(src, -1) {
		ref := varRef{line: 1 + bytes.Count(src[:m[0]], []byte("\n"))}
		if string(src[m[0]:m[1]]) == "$${" {
			ref.literal = true
		} else {
			ref.name = string(src[m[2]:m[3]])
			if m[4] >= 0 {
				ref.hasDef, ref.def = true, string(src[m[6]:m[7]])
			}
		}
		out.Write(src[last:m[0]])
		fmt.Fprintf(&out, "%s%d__", mark, len(refs))
		refs = append(refs, ref)
		last = m[1]
	}
	if refs == nil {
		return src, nil, mark
	}
	out.Write(src[last:])
	return out.Bytes(), refs, mark
}

// expander puts the variables' values into the parsed scalars.
type expander struct {
	file    string
	refs    []varRef
	mark    string
	pattern *regexp.Regexp // a placeholder, capturing its index
	lookup  func(string) (string, bool)
	err     error
}

func newExpander(file string, refs []varRef, mark string, lookup func(string) (string, bool)) *expander {
	return &expander{file: file, refs: refs, mark: mark, pattern: regexp.MustCompile(mark + `(\d+)__`), lookup: lookup}
}

// value expands the placeholders of one scalar. An unset variable without
// a default is an error at its line.
func (e *expander) value(s string) string {
	return e.pattern.ReplaceAllStringFunc(s, func(m string) string {
		i, _ := strconv.Atoi(e.pattern.FindStringSubmatch(m)[1])
		ref := e.refs[i]
		switch {
		case ref.literal:
			return "${"
		case ref.hasDef:
			if v, ok := e.lookup(ref.name); ok {
				return v
			}
			return ref.def
		}
		if v, ok := e.lookup(ref.name); ok {
			return v
		}
		if e.err == nil {
			e.err = errorf(e.file, ref.line, "environment variable %s is not set (use ${%s:-default} for a default)", ref.name, ref.name)
		}
		return m
	})
}

// node expands the scalars under n and returns n or its replacement. A
// plain (unquoted) scalar that was a single reference takes the type its
// value has in YAML (port: ${PORT} is a number); any other scalar stays a
// string holding the value verbatim, colons and hashes included.
func (e *expander) node(n ast.Node) ast.Node {
	switch x := n.(type) {
	case *ast.DocumentNode:
		x.Body = e.node(x.Body)
	case *ast.MappingNode:
		for _, mv := range x.Values {
			e.node(mv)
		}
	case *ast.MappingValueNode:
		if k, ok := e.node(x.Key).(ast.MapKeyNode); ok {
			x.Key = k
		}
		x.Value = e.node(x.Value)
	case *ast.MappingKeyNode:
		x.Value = e.node(x.Value)
	case *ast.SequenceNode:
		for i, v := range x.Values {
			x.Values[i] = e.node(v)
		}
	case *ast.AnchorNode:
		x.Value = e.node(x.Value)
	case *ast.TagNode:
		x.Value = e.node(x.Value)
	case *ast.LiteralNode:
		if x.Value != nil {
			x.Value.Value = e.value(x.Value.Value)
		}
	case *ast.StringNode:
		if !strings.Contains(x.Value, e.mark) {
			return x
		}
		whole := e.pattern.FindString(x.Value) == x.Value
		x.Value = e.value(x.Value)
		if whole && x.Token != nil && x.Token.Type == token.StringType {
			return typed(x)
		}
	}
	return n
}

// typed resolves a plain scalar's expanded value as YAML would have,
// keeping its position.
func typed(s *ast.StringNode) ast.Node {
	tk := token.New(s.Value, s.Value, s.Token.Position)
	switch tk.Type {
	case token.IntegerType, token.BinaryIntegerType, token.OctetIntegerType, token.HexIntegerType:
		return ast.Integer(tk)
	case token.FloatType:
		return ast.Float(tk)
	case token.BoolType:
		return ast.Bool(tk)
	case token.NullType:
		return ast.Null(tk)
	}
	return s
}
