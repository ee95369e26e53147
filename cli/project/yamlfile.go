package project

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/breadai/bread/engine"
)

// yamlFile is one parsed project file: its source and its expanded syntax
// tree (for lines of semantic errors) and its relative name.
type yamlFile struct {
	rel string
	src []byte
	ast *ast.File
}

// readYAML reads, expands and strictly decodes a file into v: an unknown
// field is an error at its line, so a typo never passes silently.
func (l *loader) readYAML(path string, v any) (*yamlFile, error) {
	rel := l.rel(path)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, errorAt(rel, 0, err)
	}
	// ${VAR} is expanded inside the parsed scalars, never in the raw text:
	// a value holding ": " or " #" stays one string instead of turning
	// into a key or a comment.
	protected, refs, mark := protect(raw)
	f, err := parser.ParseBytes(protected, 0)
	if err != nil {
		return nil, fromYAML(rel, err)
	}
	x := newExpander(rel, refs, mark, l.lookup)
	for _, doc := range f.Docs {
		x.node(doc)
	}
	if x.err != nil {
		return nil, x.err
	}
	if len(f.Docs) > 0 && f.Docs[0].Body != nil {
		if err := yaml.NodeToValue(f.Docs[0].Body, v, yaml.Strict()); err != nil {
			return nil, fromYAML(rel, err)
		}
	}
	yf := &yamlFile{rel: rel, src: raw, ast: f}
	if l.files == nil {
		l.files = map[string]*yamlFile{}
	}
	l.files[rel] = yf
	return yf, nil
}

// line returns the line of a YAML path such as "$.model.provider", or 0.
func (f *yamlFile) line(path string) int {
	if f == nil || f.ast == nil {
		return 0
	}
	p, err := yaml.PathString(path)
	if err != nil {
		return 0
	}
	n, err := p.FilterFile(f.ast)
	if err != nil || n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// errAt returns an error at the line of a YAML path of this file.
func (f *yamlFile) errAt(path string, err error) *Error {
	return errorAt(f.rel, f.line(path), err)
}

func (f *yamlFile) errorf(path, format string, args ...any) *Error {
	return errorf(f.rel, f.line(path), format, args...)
}

// toJSON converts a YAML-decoded value (a JSON Schema, a plugin's options)
// to JSON; nil stays nil.
func toJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(normalize(v))
}

// schemaAt converts a YAML-decoded JSON Schema at path to JSON and checks
// it compiles, so a broken schema is an error at its own line.
func (f *yamlFile) schemaAt(path string, v any) (json.RawMessage, error) {
	raw, err := toJSON(v)
	if err != nil {
		return nil, f.errAt(path, err)
	}
	if err := engine.CheckSchema(strings.TrimPrefix(path, "$."), raw); err != nil {
		return nil, f.errAt(path, err)
	}
	return raw, nil
}

// normalize turns map[any]any (which YAML can produce) into map[string]any.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[toString(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	}
	return v
}

func toString(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	b, _ := json.Marshal(k)
	return string(b)
}

func (l *loader) rel(path string) string {
	if r, err := filepath.Rel(l.dir, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}
