package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/breadai/bread/core"
)

// cmdRuns reads the project's durable run records, whichever process ran
// them: `runs get ID` one record, `runs list` the newest ones, and `runs
// cancel ID` ends a background run still queued or a run that waits for a
// human (a running run is cancelled through the server that runs it: POST
// /runs/{id}/cancel).
func cmdRuns(ctx context.Context, a *app, args []string) int {
	if wantsHelp(args) && (len(args) == 0 || !isRunsVerb(args[0])) {
		args = append([]string{"get"}, args...) // let parse print the help
	}
	if len(args) == 0 || !isRunsVerb(args[0]) {
		return a.usageError("runs", fmt.Errorf("runs needs get, list or cancel"))
	}
	verb := args[0]
	fs := flag.NewFlagSet("runs "+verb, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the records as JSON")
	var filter core.RunFilter
	var status string
	if verb == "list" {
		fs.StringVar(&filter.SessionID, "session", "", "only the runs of this session")
		fs.StringVar(&filter.AgentID, "agent", "", "only the runs of this agent")
		fs.StringVar(&status, "status", "", "only runs in this status (queued, running, suspended, completed, failed, cancelled, lost)")
		fs.IntVar(&filter.Limit, "limit", 20, "at most this many, newest first (0: all)")
	}
	pos, err := a.parse(fs, args[1:])
	switch {
	case err != nil:
	case verb == "list" && len(pos) != 0:
		err = fmt.Errorf("runs list takes no arguments")
	case verb != "list" && len(pos) != 1:
		err = fmt.Errorf("runs %s needs one run id", verb)
	case status != "" && !slices.Contains([]core.RunStatus{core.RunQueued, core.RunRunning, core.RunSuspended, core.RunCompleted, core.RunFailed, core.RunCancelled, core.RunLost}, core.RunStatus(status)):
		err = fmt.Errorf("unknown status %q", status)
	}
	if err != nil {
		return a.usageError("runs", err)
	}
	filter.Status = core.RunStatus(status)
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	inst, _, err := a.started(ctx, modeTerminal)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))
	rs := inst.Storage()
	if !rs.Has(core.StoreRuns) {
		return a.fail(&core.BreadError{Code: core.CodeNotImplemented, Message: "the store keeps no run records"})
	}
	var recs []core.RunRecord
	switch verb {
	case "get":
		rec, err := rs.GetRun(ctx, pos[0])
		if err != nil {
			return a.fail(err)
		}
		recs = []core.RunRecord{rec}
	case "list":
		if !rs.Has(core.StoreRunList) {
			return a.fail(&core.BreadError{Code: core.CodeNotImplemented, Message: "the store does not list its runs"})
		}
		if recs, err = rs.ListRuns(ctx, filter); err != nil {
			return a.fail(err)
		}
	case "cancel":
		found, err := inst.CancelQueued(ctx, pos[0])
		if err == nil && !found {
			found, err = inst.CancelSuspended(ctx, pos[0])
		}
		if err != nil {
			return a.fail(err)
		}
		if !found {
			return a.fail(&core.BreadError{Code: core.CodeNotFound, Message: "run " + pos[0] + " is neither queued nor waiting for a human; a running run is cancelled through the server running it (POST /runs/{id}/cancel)"})
		}
		rec, err := rs.GetRun(ctx, pos[0])
		if err != nil {
			return a.fail(err)
		}
		recs = []core.RunRecord{rec}
	}
	if *asJSON {
		var b []byte
		if verb == "list" {
			b, _ = json.Marshal(recs)
		} else {
			b, _ = json.Marshal(recs[0])
		}
		fmt.Fprintln(a.stdout, string(b))
		return ExitOK
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tAGENT\tSESSION\tSTATUS\tERROR\tUPDATED")
	for _, rec := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", rec.ID, rec.AgentID, rec.SessionID, rec.Status, rec.ErrorCode, time.UnixMilli(rec.UpdatedAt).UTC().Format(time.RFC3339))
	}
	_ = tw.Flush()
	return ExitOK
}

func isRunsVerb(s string) bool { return s == "get" || s == "list" || s == "cancel" }
