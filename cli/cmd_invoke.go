package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
)

// cmdInvoke runs an agent once, non-interactively: streamed text to stdout
// (or, with --json, the final output), tool calls to stderr with --trace. A
// run that waits for a human cannot finish unattended: invoke says so and
// exits with ExitNeedsHITL instead of hanging.
func cmdInvoke(ctx context.Context, a *app, args []string) int {
	fs := flag.NewFlagSet("invoke", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the final output as JSON instead of streamed text")
	trace := fs.Bool("trace", false, "log tool calls to stderr")
	session := fs.String("s", "", "session id to continue")
	fs.StringVar(session, "session", "", "session id to continue")
	skill := fs.String("skill", "", "skill for this run")
	record := fs.String("record", "", "record model calls to FILE")
	background := fs.Bool("background", false, "queue the run for the project's workers and print its id (needs workers: in bread.yaml)")
	webhook := fs.String("webhook", "", "with --background: URL told how the run ended")
	pos, err := a.parse(fs, args)
	if err == nil && *webhook != "" && !*background {
		err = fmt.Errorf("--webhook needs --background")
	}
	if err != nil {
		return a.usageError("invoke", err)
	}
	if len(pos) == 0 || len(pos) > 2 {
		return a.usageError("invoke", fmt.Errorf("want an agent and at most one input"))
	}
	agentID := pos[0]
	var input any
	if len(pos) == 2 {
		input = parseInput(pos[1])
	} else {
		b, err := io.ReadAll(io.LimitReader(a.stdin, 16<<20))
		if err != nil {
			return a.fail(err)
		}
		input = parseInput(string(b))
	}
	done, err := a.withRecording(*record)
	if err != nil {
		return a.fail(err)
	}
	defer done()
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	if a.refuseToRun() {
		return ExitFailure
	}
	inst, _, err := a.started(ctx, modeTerminal)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))

	opts := core.RunOptions{Session: core.SessionOptions{ID: *session}, Skill: *skill}
	if *background {
		return a.invokeBackground(ctx, inst, agentID, input, opts, *webhook, *asJSON)
	}
	if *trace {
		defer inst.On(a.printer(a.stderr, false, isToolCrumb).Listen)()
	}
	var output any
	streamed := false
	for c, err := range inst.Run(ctx, agentID, input, opts) {
		switch invokeStepOf(c, agentID) {
		case invokeText:
			if !*asJSON {
				fmt.Fprint(a.stdout, c.(*core.TextDelta).Delta)
				streamed = true
			}
		case invokeNeedsHuman:
			v := c.(*core.HumanRequired)
			fmt.Fprintf(a.stderr, "bread: agent %s needs a human (%s, checkpoint %s); invoke is non-interactive, use `bread chat` for runs that need input or approval\n", v.AgentID, v.ToolName, v.CheckpointID)
			return ExitNeedsHITL
		case invokeOutput:
			output = c.(*core.AgentRunEnd).Output
		}
		if err != nil {
			if streamed {
				fmt.Fprintln(a.stdout)
			}
			fmt.Fprintln(a.stderr, "bread:", core.Sanitize(err).Error())
			return ExitFailure
		}
	}
	switch {
	case *asJSON:
		b, err := jsonIndent(output)
		if err != nil {
			return a.fail(err)
		}
		fmt.Fprintln(a.stdout, b)
	case streamed:
		fmt.Fprintln(a.stdout)
	default:
		fmt.Fprintln(a.stdout, pretty(output))
	}
	return ExitOK
}

// invokeStep is what bread invoke does with one crumb of its run.
type invokeStep uint8

const (
	// invokeSkips: nothing; the crumb is framing, a step (--trace prints
	// tool calls), or another agent's.
	invokeSkips invokeStep = iota
	// invokeText: the invoked agent's text, streamed to stdout unless
	// --json.
	invokeText
	// invokeNeedsHuman: the run waits for a human; invoke says so and
	// exits with ExitNeedsHITL.
	invokeNeedsHuman
	// invokeOutput: the invoked agent's output, printed at the end.
	invokeOutput
)

// invokeStepOf decides what invoke does with c, a crumb of a run of
// agentID (the crumbs of its delegations and steps included).
func invokeStepOf(c core.Crumb, agentID string) invokeStep {
	switch v := c.(type) {
	case *core.TextDelta:
		if v.AgentID == agentID {
			return invokeText
		}
	case *core.HumanRequired:
		return invokeNeedsHuman
	case *core.AgentRunEnd:
		if v.AgentID == agentID {
			return invokeOutput
		}
	}
	return invokeSkips
}

// isToolCrumb selects what --trace prints: tool calls and their outcomes.
func isToolCrumb(c core.Crumb) bool {
	switch c.(type) {
	case *core.ToolCall, *core.ToolResult, *core.ToolError, *core.ToolResultPartial:
		return true
	}
	return false
}

// invokeBackground queues the run for the workers of the project's job
// queue (a serving replica works it) and prints its id and session. Without
// a durable queue it refuses: this process ends at once, and a run on its
// goroutines would end with it.
func (a *app) invokeBackground(ctx context.Context, inst *engine.Instance, agentID string, input any, opts core.RunOptions, webhook string, asJSON bool) int {
	if !a.durableJobs {
		return a.fail(&core.BreadError{Code: core.CodeInvalidConfig, Message: "invoke --background needs a durable job queue: add a workers: section to bread.yaml (with a sqlite or postgres store)"})
	}
	d, err := inst.RunBackground(ctx, agentID, input, opts, core.BackgroundOptions{Webhook: webhook})
	if err != nil {
		return a.fail(err)
	}
	if asJSON {
		b, _ := json.Marshal(d)
		fmt.Fprintln(a.stdout, string(b))
		return ExitOK
	}
	fmt.Fprintf(a.stdout, "queued run %s (session %s)\n", d.RunID, d.SessionID)
	return ExitOK
}
