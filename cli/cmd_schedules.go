package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
)

// cmdSchedules lists bread.yaml's schedules with their next tick, as GET
// /schedules does, without starting anything: `bread schedules [--json]`.
func cmdSchedules(_ context.Context, a *app, args []string) int {
	fs := flag.NewFlagSet("schedules", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the schedules as JSON")
	pos, err := a.parse(fs, args)
	if err == nil && len(pos) != 0 {
		err = fmt.Errorf("schedules takes no arguments")
	}
	if err != nil {
		return a.usageError("schedules", err)
	}
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	list, err := a.scheduleInfos(time.Now())
	if err != nil {
		return a.fail(err)
	}
	if *asJSON {
		b, _ := json.Marshal(list)
		fmt.Fprintln(a.stdout, string(b))
		return ExitOK
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWHEN\tZONE\tAGENT\tSESSION\tNEXT")
	for _, s := range list {
		zone, session := s.TimeZone, s.Session
		if zone == "" {
			zone = "UTC"
		}
		if session == "" {
			session = "(new)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Spec, zone, s.AgentID, session, s.Next.Format(time.RFC3339))
	}
	_ = tw.Flush()
	return ExitOK
}

// scheduleInfos lists the project's schedules with their next tick after
// now, checked as the engine would check them.
func (a *app) scheduleInfos(now time.Time) ([]core.ScheduleInfo, error) {
	parsed, err := a.checkSchedules()
	if err != nil {
		return nil, err
	}
	return engine.ScheduleInfos(parsed, now), nil
}
