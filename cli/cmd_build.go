package cli

import (
	"context"
	"fmt"

	"github.com/breadai/bread/core"
)

// cmdBuild checks the project: it loads (so every config error surfaces
// with its file and line), then checks each served agent has an input
// schema, an output schema and a complete model whose provider is
// registered, printing one line per missing field.
func cmdBuild(ctx context.Context, a *app, args []string) int {
	if len(args) > 0 {
		return a.usageError("build", fmt.Errorf("unexpected argument %q", args[0]))
	}
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	providers, err := a.providers()
	if err != nil {
		return a.fail(err)
	}
	served := a.project.Agents
	if eps := a.project.Config.Entrypoints; len(eps) > 0 {
		served = nil
		for _, id := range eps {
			if ag, ok := a.project.Agent(id); ok {
				served = append(served, ag)
			}
		}
	}
	failures := 0
	missing := func(id, what string) {
		failures++
		fmt.Fprintf(a.stderr, "[bread] Agent %q missing %s\n", id, what)
	}
	for _, ag := range served {
		if len(ag.InputSchema) == 0 {
			missing(ag.ID, "inputSchema")
		}
		if len(ag.OutputSchema) == 0 {
			missing(ag.ID, "outputSchema")
		}
		if ag.Model.Provider == "" {
			missing(ag.ID, "model.provider")
		}
		if ag.Model.Model == "" {
			missing(ag.ID, "model.model")
		}
		if ag.Model.Provider != "" && ag.Providers == nil {
			if _, ok := providers[ag.Model.Provider]; !ok {
				failures++
				fmt.Fprintf(a.stderr, "[bread] Agent %q uses unknown provider %q (registered: %v)\n", ag.ID, ag.Model.Provider, providers.Names())
			}
		}
	}
	// A replay model's transcript is opened when the first run calls it;
	// open each now so a missing or malformed one fails the build, not
	// every run. Other providers are left alone: their factories need
	// credentials that a build machine may rightly lack.
	for _, ag := range a.project.Agents {
		if ag.Providers != nil || !a.isReplay(ag.Model.Provider) || ag.Model.Model == "" {
			continue
		}
		if f, ok := providers[ag.Model.Provider]; ok {
			if _, err := f(ag.Model.Model); err != nil {
				failures++
				fmt.Fprintf(a.stderr, "[bread] Agent %q: %v\n", ag.ID, err)
			}
		}
	}
	cfg := a.project.Config
	if cfg.Store == nil {
		failures++
		fmt.Fprintf(a.stderr, "[bread] bread.yaml: %s: no store configured\n", core.CodeStoreNotConfigured)
	} else if err := a.knownStore(cfg.Store); err != nil {
		failures++
		fmt.Fprintf(a.stderr, "[bread] %v\n", err)
	}
	if _, err := a.wiring(); err != nil {
		failures++
		fmt.Fprintf(a.stderr, "[bread] %v\n", err)
	}
	if len(cfg.Server.Auth) > 0 {
		if _, err := a.authStrategies(cfg.Server.Auth); err != nil {
			failures++
			fmt.Fprintf(a.stderr, "[bread] %v\n", err)
		}
		if _, err := a.streamTokens(); err != nil {
			failures++
			fmt.Fprintf(a.stderr, "[bread] %v\n", err)
		}
	}
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
	fmt.Fprintf(a.stdout, "[bread] %d agent(s) ok\n", len(served))
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
