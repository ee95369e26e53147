package oteltest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Tree renders spans as indented trees, one per trace, children in start
// order: "name [service]" per line. A span whose parent is missing is
// shown as a root marked "(orphan)".
func Tree(spans []Span) string {
	byID := map[string]Span{}
	kids := map[string][]Span{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	var roots []Span
	for _, s := range spans {
		if _, ok := byID[s.ParentSpanID]; ok && s.ParentSpanID != "" {
			kids[s.ParentSpanID] = append(kids[s.ParentSpanID], s)
		} else {
			roots = append(roots, s)
		}
	}
	order := func(a, b Span) int { return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Name, b.Name)) }
	slices.SortFunc(roots, order)
	var b strings.Builder
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		mark := ""
		if depth == 0 && s.ParentSpanID != "" && s.ParentSpanID != "0000000000000000" {
			mark = " (orphan)"
		}
		fmt.Fprintf(&b, "%s%s [%s]%s\n", strings.Repeat("  ", depth), s.Name, s.Service, mark)
		ks := kids[s.SpanID]
		slices.SortFunc(ks, order)
		for _, k := range ks {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

// InTrace returns the spans of one trace: the trace of the first root span
// (no parent) that root accepts, or nil when there is none.
func InTrace(spans []Span, root func(Span) bool) []Span {
	id := ""
	for _, s := range spans {
		if s.ParentSpanID == "" && root(s) {
			id = s.TraceID
			break
		}
	}
	if id == "" {
		return nil
	}
	var out []Span
	for _, s := range spans {
		if s.TraceID == id {
			out = append(out, s)
		}
	}
	return out
}
