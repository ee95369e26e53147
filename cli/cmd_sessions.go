package cli

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/breadai/bread/core"
)

// tagFlags collects repeated --tag key=value flags.
type tagFlags map[string]string

func (t tagFlags) String() string { return "" }
func (t tagFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("--tag wants key=value, got %q", v)
	}
	t[k] = val
	return nil
}

// cmdSessions lists sessions (optionally by tag) or deletes old ones.
func cmdSessions(ctx context.Context, a *app, args []string) int {
	if wantsHelp(args) && (len(args) == 0 || (args[0] != "list" && args[0] != "cleanup")) {
		args = append([]string{"list"}, args...) // let parse print the help
	}
	if len(args) == 0 || (args[0] != "list" && args[0] != "cleanup") {
		return a.usageError("sessions", fmt.Errorf("sessions needs list or cleanup"))
	}
	sub := args[0]
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	tags := tagFlags{}
	fs.Var(tags, "tag", "key=value (repeatable)")
	olderThan := fs.Float64("older-than", 0, "days")
	pos, err := a.parse(fs, args[1:])
	if err != nil || len(pos) > 0 {
		return a.usageError("sessions", err)
	}
	if sub == "cleanup" && *olderThan <= 0 {
		return a.usageError("sessions", fmt.Errorf("cleanup needs --older-than DAYS (tags alone never delete)"))
	}
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	inst, _, err := a.started(ctx, modeTerminal)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))
	store := inst.Storage()
	if sub == "cleanup" {
		n, err := store.CleanupSessions(ctx, core.CleanupOptions{OlderThan: time.Duration(*olderThan * float64(24*time.Hour)), Tags: tags})
		if err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(a.stdout, "deleted %d session(s)\n", n)
		return ExitOK
	}
	sessions, err := store.ListSessions(ctx, core.SessionFilter{Tags: tags})
	if err != nil {
		return a.fail(err)
	}
	slices.SortFunc(sessions, func(x, y core.Session) int { return int(y.UpdatedAt - x.UpdatedAt) })
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tUPDATED\tTAGS")
	for _, s := range sessions {
		var ts []string
		for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
			ts = append(ts, k+"="+s.Tags[k])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.AgentID, time.UnixMilli(s.UpdatedAt).UTC().Format(time.RFC3339), strings.Join(ts, ","))
	}
	_ = tw.Flush()
	return ExitOK
}
