package main

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// In development a module requires its siblings at devVersion, a version no
// proxy has; a replace pointing at the sibling's directory makes it resolve.
// `go mod tidy` runs without the workspace and honours only the main
// module's replaces, so a module must replace every sibling in its module
// graph: the siblings it needs, the siblings those need, and so on.
const devVersion = "v0.0.0"

// siblingNeeds returns the sibling modules m needs, sorted: those its go.mod
// requires and those its Go files import, itself excluded.
func (ws *Workspace) siblingNeeds(m Module) ([]string, error) {
	f, err := modfile.ParseLax(m.GoModFile(), m.GoMod, nil)
	if err != nil {
		return nil, err
	}
	var needs []string
	for _, r := range f.Require {
		if !ws.IsSibling(r.Mod.Path) {
			continue
		}
		if _, ok := ws.Module(r.Mod.Path); !ok {
			return nil, fmt.Errorf("%s: requires %s, which is not a module of go.work", m.GoModFile(), r.Mod.Path)
		}
		needs = append(needs, r.Mod.Path)
	}
	imported, err := ws.ImportedModules(filepath.Join(ws.Root, filepath.FromSlash(dirOrDot(m.Dir))))
	if err != nil {
		return nil, err
	}
	needs = append(needs, imported...)
	slices.Sort(needs)
	needs = slices.Compact(needs)
	return slices.DeleteFunc(needs, func(p string) bool { return p == m.Path }), nil
}

// SiblingPlan is what the sibling lines of every go.mod should be.
type SiblingPlan struct {
	// Needs maps a module path to the siblings it needs directly.
	Needs map[string][]string
	// Replaces maps a module path to the siblings it must replace: its
	// needs, transitively, itself excluded. Sorted.
	Replaces map[string][]string
}

// PlanSiblings reads what every module of the workspace needs and closes it
// over the sibling graph.
func (ws *Workspace) PlanSiblings() (*SiblingPlan, error) {
	p := &SiblingPlan{Needs: map[string][]string{}, Replaces: map[string][]string{}}
	for _, m := range ws.Modules {
		needs, err := ws.siblingNeeds(m)
		if err != nil {
			return nil, err
		}
		p.Needs[m.Path] = needs
	}
	for _, m := range ws.Modules {
		seen := map[string]bool{m.Path: true}
		queue := slices.Clone(p.Needs[m.Path])
		var all []string
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			if seen[s] {
				continue
			}
			seen[s] = true
			all = append(all, s)
			queue = append(queue, p.Needs[s]...)
		}
		slices.Sort(all)
		p.Replaces[m.Path] = all
	}
	return p, nil
}

// relDir is the replace target for sibling dir as seen from module dir:
// always starting with ./ or ../, as the go command needs for a directory.
func relDir(from, to string) string {
	fromParts, toParts := split(from), split(to)
	common := 0
	for common < len(fromParts) && common < len(toParts) && fromParts[common] == toParts[common] {
		common++
	}
	rel := path.Join(append(slices.Repeat([]string{".."}, len(fromParts)-common), toParts[common:]...)...)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return rel
	}
	return "./" + rel
}

func split(dir string) []string {
	if dir == "" {
		return nil
	}
	return strings.Split(dir, "/")
}

// WithSiblings returns m's go.mod with a require at devVersion for every
// sibling it imports but does not require, and with its sibling replaces
// exactly plan's: one per sibling in its graph, pointing at the sibling's
// directory, in one statement after everything else (a block when there
// are several). Other lines are kept.
func (ws *Workspace) WithSiblings(m Module, plan *SiblingPlan) ([]byte, error) {
	f, err := modfile.Parse(m.GoModFile(), m.GoMod, nil)
	if err != nil {
		return nil, err
	}
	required := map[string]bool{}
	for _, r := range f.Require {
		required[r.Mod.Path] = true
	}
	for _, s := range plan.Needs[m.Path] {
		if !required[s] {
			f.AddNewRequire(s, devVersion, false)
		}
	}
	for _, r := range slices.Clone(f.Replace) {
		if ws.IsSibling(r.Old.Path) {
			if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return nil, err
			}
		}
	}
	f.Cleanup()
	// Written as a fresh block at the end, so the layout never depends on
	// where a hand-written replace used to be.
	var block []string
	for _, s := range plan.Replaces[m.Path] {
		sib, _ := ws.Module(s)
		block = append(block, fmt.Sprintf("\t%s => %s\n", modfile.AutoQuote(s), modfile.AutoQuote(relDir(m.Dir, sib.Dir))))
	}
	out, err := f.Format()
	if err != nil {
		return nil, err
	}
	if len(block) == 0 {
		return out, nil
	}
	var b bytes.Buffer
	b.Write(bytes.TrimRight(out, "\n"))
	if len(block) == 1 {
		b.WriteString("\n\nreplace " + strings.TrimPrefix(block[0], "\t"))
	} else {
		b.WriteString("\n\nreplace (\n" + strings.Join(block, "") + ")\n")
	}
	// Round-trip through the parser so the result is formatted as the go
	// command formats it (go mod tidy then leaves it as is).
	g, err := modfile.Parse(m.GoModFile(), b.Bytes(), nil)
	if err != nil {
		return nil, err
	}
	return g.Format()
}

// SiblingDrift compares every go.mod with what WithSiblings writes and
// returns one line per go.mod that differs, naming the lines to add (+) and
// remove (-).
func (ws *Workspace) SiblingDrift() ([]string, error) {
	plan, err := ws.PlanSiblings()
	if err != nil {
		return nil, err
	}
	var drift []string
	for _, m := range ws.Modules {
		want, err := ws.WithSiblings(m, plan)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(want, m.GoMod) {
			continue
		}
		drift = append(drift, fmt.Sprintf("%s: %s", m.GoModFile(), lineDiff(m.GoMod, want)))
	}
	return drift, nil
}

// lineDiff names the lines of want missing from have (+) and of have
// missing from want (-), ignoring order; "layout" when only order differs.
func lineDiff(have, want []byte) string {
	count := func(b []byte) map[string]int {
		c := map[string]int{}
		for _, l := range strings.Split(string(b), "\n") {
			// Block delimiters say nothing on their own.
			if l = strings.TrimSpace(l); l != "" && l != ")" && !strings.HasSuffix(l, " (") {
				c[l]++
			}
		}
		return c
	}
	h, w := count(have), count(want)
	var parts []string
	for l, n := range w {
		if h[l] < n {
			parts = append(parts, "+"+l)
		}
	}
	for l, n := range h {
		if w[l] < n {
			parts = append(parts, "-"+l)
		}
	}
	if len(parts) == 0 {
		return "layout of the sibling lines"
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// WriteSiblings rewrites, in place, every go.mod whose sibling lines differ
// from what WithSiblings writes.
func (ws *Workspace) WriteSiblings() error {
	plan, err := ws.PlanSiblings()
	if err != nil {
		return err
	}
	for i := range ws.Modules {
		m := &ws.Modules[i]
		out, err := ws.WithSiblings(*m, plan)
		if err != nil {
			return err
		}
		if bytes.Equal(out, m.GoMod) {
			continue
		}
		if err := ws.writeGoMod(m, out); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", m.GoModFile())
	}
	return nil
}

// TidyOrder returns the modules so that each comes after the siblings it
// needs (cycles broken by directory order): `go mod tidy` in that order reads
// every sibling's go.mod after its own tidy.
func (ws *Workspace) TidyOrder() ([]Module, error) {
	plan, err := ws.PlanSiblings()
	if err != nil {
		return nil, err
	}
	var order []Module
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(m *Module)
	visit = func(m *Module) {
		if state[m.Path] != 0 {
			return
		}
		state[m.Path] = 1
		for _, s := range plan.Needs[m.Path] {
			sib, _ := ws.Module(s)
			visit(sib)
		}
		state[m.Path] = 2
		order = append(order, *m)
	}
	for i := range ws.Modules {
		visit(&ws.Modules[i])
	}
	return order, nil
}
