package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/breadai/bread/core"
)

// cmdRuns reads a run's durable record from the project's store: where a
// run (a background one, for instance) stands, whichever process ran it.
func cmdRuns(ctx context.Context, a *app, args []string) int {
	if wantsHelp(args) && (len(args) == 0 || args[0] != "get") {
		args = append([]string{"get"}, args...) // let parse print the help
	}
	if len(args) == 0 || args[0] != "get" {
		return a.usageError("runs", fmt.Errorf("runs needs get"))
	}
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the record as JSON")
	pos, err := a.parse(fs, args[1:])
	if err != nil || len(pos) != 1 {
		if err == nil {
			err = fmt.Errorf("runs get needs one run id")
		}
		return a.usageError("runs", err)
	}
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	inst, _, err := a.started(ctx, modeTerminal)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))
	rs, ok := inst.Store().(core.RunStore)
	if !ok {
		return a.fail(&core.BreadError{Code: core.CodeNotImplemented, Message: "the store keeps no run records"})
	}
	rec, err := rs.GetRun(ctx, pos[0])
	if err != nil {
		return a.fail(err)
	}
	if *asJSON {
		b, _ := json.Marshal(rec)
		fmt.Fprintln(a.stdout, string(b))
		return ExitOK
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tAGENT\tSESSION\tSTATUS\tERROR\tUPDATED")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", rec.ID, rec.AgentID, rec.SessionID, rec.Status, rec.ErrorCode, time.UnixMilli(rec.UpdatedAt).UTC().Format(time.RFC3339))
	_ = tw.Flush()
	return ExitOK
}
