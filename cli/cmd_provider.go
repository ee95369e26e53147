package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/providers/catalog"
)

// cmdProvider lists the built-in providers with their environment status
// for this project, or adds one to bread.yaml.
func cmdProvider(ctx context.Context, a *app, args []string) int {
	switch {
	case len(args) == 1 && args[0] == "list":
		return a.providerList()
	case len(args) == 2 && args[0] == "add":
		return a.providerAdd(args[1])
	}
	return a.usageError("provider", fmt.Errorf("provider needs list, or add <name>"))
}

func (a *app) providerList() int {
	used := map[string][]string{}
	if a.load() == nil {
		for _, ag := range a.project.Agents {
			used[ag.Model.Provider] = append(used[ag.Model.Provider], ag.ID)
		}
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tNAME\tENV\tSTATUS\tUSED BY")
	for _, p := range catalog.Providers() {
		status := "ready"
		var missing []string
		for _, v := range p.Required {
			if _, ok := a.lookup(v); !ok {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			status = "missing " + strings.Join(missing, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.DisplayName, strings.Join(p.EnvVars, " "), status, strings.Join(used[p.Name], ","))
	}
	fmt.Fprintf(tw, "replay\tRecorded transcripts\t\tready\t%s\n", strings.Join(used["replay"], ","))
	_ = tw.Flush()
	return ExitOK
}

// providerAdd adds a provider to bread.yaml's providers section, keeping the
// file's form (inline list, block list or map) and comments, and prints the
// variables it needs.
func (a *app) providerAdd(name string) int {
	info, ok := catalog.Lookup(name)
	if !ok && name != "replay" {
		var names []string
		for _, p := range catalog.Providers() {
			names = append(names, p.Name)
		}
		return a.fail(core.Errorf(core.CodeUnknownProvider, "unknown provider %q; known: %s, replay", name, strings.Join(names, ", ")))
	}
	path := filepath.Join(a.cwd, "bread.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		return a.fail(err)
	}
	// Without a providers section every built-in provider is implicitly
	// there; an explicit list must keep the ones the agents use.
	var keep []string
	if a.load() == nil && len(a.project.Config.Providers) == 0 {
		for _, ag := range a.project.Agents {
			p := ag.Model.Provider
			if _, builtin := catalog.Lookup(p); (builtin || p == "replay") && p != name && !slices.Contains(keep, p) {
				keep = append(keep, p)
			}
		}
	}
	out, added, err := addProvider(string(src), append(keep, name)...)
	if err != nil {
		return a.fail(fmt.Errorf("bread.yaml: %w", err))
	}
	if added {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(a.stdout, "added %s to bread.yaml\n", name)
		if len(keep) > 0 {
			fmt.Fprintf(a.stdout, "kept %s, which this project's agents use (a providers section registers only the providers it lists)\n", strings.Join(keep, ", "))
		}
	} else {
		fmt.Fprintf(a.stdout, "%s is already in bread.yaml\n", name)
	}
	if len(info.EnvVars) > 0 {
		fmt.Fprintf(a.stdout, "set: %s (docs: %s)\n", strings.Join(info.EnvVars, ", "), info.DocsURL)
	}
	return ExitOK
}

// addProvider edits bread.yaml's text: `providers:` absent, inline
// ([a, b] or {a: {}}), a block list or a block map.
func addProvider(src string, names ...string) (string, bool, error) {
	name := names[len(names)-1]
	lines := strings.Split(src, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "providers:") {
			at = i
		}
	}
	if at < 0 {
		if !strings.HasSuffix(src, "\n") && src != "" {
			src += "\n"
		}
		return src + "providers: [" + strings.Join(names, ", ") + "]\n", true, nil
	}
	rest := strings.TrimSpace(strings.TrimPrefix(lines[at], "providers:"))
	if i := strings.Index(rest, " #"); i >= 0 {
		rest = strings.TrimSpace(rest[:i])
	}
	switch {
	case strings.HasPrefix(rest, "["):
		inner := strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]")
		items := splitInline(inner)
		if slices.Contains(items, name) {
			return src, false, nil
		}
		lines[at] = "providers: [" + strings.Join(append(items, name), ", ") + "]"
	case strings.HasPrefix(rest, "{"):
		inner := strings.TrimSuffix(strings.TrimPrefix(rest, "{"), "}")
		for _, item := range splitInline(inner) {
			if k, _, _ := strings.Cut(item, ":"); strings.TrimSpace(k) == name {
				return src, false, nil
			}
		}
		sep := ", "
		if strings.TrimSpace(inner) == "" {
			sep = ""
		}
		lines[at] = "providers: {" + strings.TrimSpace(inner) + sep + name + ": {}}"
	case rest == "":
		end, indent, list := at, "  ", false
		for i := at + 1; i < len(lines); i++ {
			l := lines[i]
			if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			if l[0] != ' ' && l[0] != '\t' && !strings.HasPrefix(l, "- ") {
				break
			}
			trimmed := strings.TrimLeft(l, " \t")
			if end == at {
				indent = l[:len(l)-len(trimmed)]
				list = strings.HasPrefix(trimmed, "- ")
			}
			if len(l)-len(trimmed) == len(indent) {
				key := strings.TrimPrefix(trimmed, "- ")
				if k, _, _ := strings.Cut(key, ":"); strings.TrimSpace(k) == name {
					return src, false, nil
				}
			}
			end = i
		}
		entry := indent + name + ": {}"
		if list || end == at {
			entry = indent + "- " + name
		}
		lines = slices.Insert(lines, end+1, entry)
	default:
		return "", false, fmt.Errorf("cannot read `providers: %s`; edit it by hand", rest)
	}
	return strings.Join(lines, "\n"), true, nil
}

func splitInline(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				if v := strings.TrimSpace(s[start:i]); v != "" {
					out = append(out, v)
				}
				start = i + 1
			}
		}
	}
	if v := strings.TrimSpace(s[start:]); v != "" {
		out = append(out, v)
	}
	return out
}
