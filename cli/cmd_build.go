package cli

import (
	"context"
	"fmt"
)

// cmdBuild checks the project: it loads (so every config error surfaces
// with its file and line), then runs checkProject, the checks `start`
// refuses a project for too, printing one line per problem and per
// warning, and with the parts sound builds what `start` builds.
func cmdBuild(ctx context.Context, a *app, args []string) int {
	if len(args) > 0 {
		return a.usageError("build", fmt.Errorf("unexpected argument %q", args[0]))
	}
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	problems, warnings := a.checkProject()
	for _, w := range warnings {
		fmt.Fprintf(a.stderr, "[bread] warning: %s\n", w)
	}
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "[bread] %v\n", p)
	}
	failures := len(problems)
	// With the parts sound, build what `start` builds (on an in-memory
	// store, with no bus or listener) so that what only construction can
	// tell also fails here: schemas that do not compile, permission
	// selectors naming no tool, unknown actions in an allow list, a port
	// out of range.
	if failures == 0 {
		if err := a.buildCheck(ctx); err != nil {
			failures++
			fmt.Fprintf(a.stderr, "[bread] %v\n", err)
		}
	}
	if failures > 0 {
		fmt.Fprintf(a.stderr, "[bread] build failed: %d problem(s)\n", failures)
		return ExitFailure
	}
	served := len(a.project.Agents)
	if eps := a.project.Config.Entrypoints; len(eps) > 0 {
		served = len(eps)
	}
	fmt.Fprintf(a.stdout, "[bread] %d agent(s) ok\n", served)
	return ExitOK
}

// buildCheck constructs the instance and server `start` would, checks the
// replay transcripts exist, and drops what it built.
func (a *app) buildCheck(ctx context.Context) error {
	if _, err := a.checkSchedules(); err != nil {
		return err
	}
	inst, so, err := a.instance(ctx, modeBuild)
	if err != nil {
		return err
	}
	if _, err := a.newServer(inst, so); err != nil {
		return err
	}
	return nil
}

// isReplay reports whether the provider name resolves to the replay
// provider: bread.yaml's providers section, or the default registry.
func (a *app) isReplay(name string) bool {
	if comps := a.project.Config.Providers; len(comps) > 0 {
		c, ok := comps[name]
		return ok && c.Type == "replay"
	}
	return name == "replay"
}
