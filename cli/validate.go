package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/breadai/bread/core"
)

// checkProject is what `bread build` and `bread start` (and `dev`) both
// refuse in a loaded project, so the two never disagree: each served agent
// (the entrypoints, or every agent) must have a model whose provider is
// registered; a replay transcript must open; the store, bus wiring and
// auth must be known; and agents must not delegate in a cycle unless
// bread.yaml sets delegation.maxDepth. Every problem is at its file and
// line. Warnings are what both accept but say: a cycle under an explicit
// maxDepth; a served agent with no prompt.md (it runs with no system
// prompt, as the original's loader allows) or with no inputSchema or
// outputSchema (the original's build refused those while its server ran
// them; here both commands run them, and say so).
//
// What only construction can tell (schemas that do not compile, selectors
// matching no tool, unknown actions in an allow list) fails after it, the
// same way in both, when the engine and server are built.
func (a *app) checkProject() (problems []error, warnings []string) {
	return a.checkProjectFor(true)
}

// checkProjectFor is checkProject; with serving false it leaves out what
// only a server uses (the bus wiring, auth and stream tokens), for the
// terminal commands that run agents (invoke, chat): a project they would
// run with a delegation cycle, an unknown provider or a broken transcript
// is refused before any run, as build and start refuse it, while a
// server's secrets a developer's machine may lack do not stop them.
func (a *app) checkProjectFor(serving bool) (problems []error, warnings []string) {
	p := a.project
	providers, err := a.providers()
	if err != nil {
		return []error{err}, nil
	}
	served := p.Agents
	if eps := p.Config.Entrypoints; len(eps) > 0 {
		served = nil
		for _, id := range eps {
			if ag, ok := p.Agent(id); ok {
				served = append(served, ag)
			}
		}
	}
	for _, ag := range served {
		rel := "agents/" + ag.ID + "/agent.yaml"
		// A missing field has no line of its own: the problem is at the
		// file.
		missing := func(what string) {
			problems = append(problems, p.At(rel, "$.none", core.Errorf(core.CodeInvalidConfig, "Agent %q missing %s", ag.ID, what)))
		}
		// A served agent without schemas runs (its input unchecked, its
		// text output as is), so both commands accept it and say so.
		for _, s := range []struct {
			name   string
			schema []byte
		}{{"inputSchema", ag.InputSchema}, {"outputSchema", ag.OutputSchema}} {
			if len(s.schema) == 0 && a.fromFile(ag.ID) {
				warnings = append(warnings, fmt.Sprintf("agents/%s/agent.yaml: agent %q has no %s", ag.ID, ag.ID, s.name))
			}
		}
		if ag.Model.Provider == "" {
			missing("model.provider")
		}
		if ag.Model.Model == "" {
			missing("model.model")
		}
		if ag.Model.Provider != "" && ag.Providers == nil {
			if _, ok := providers[ag.Model.Provider]; !ok {
				problems = append(problems, p.At(rel, "$.model.provider", &core.BreadError{Code: core.CodeUnknownProvider,
					Message: fmt.Sprintf("Agent %q uses unknown provider %q (registered: %v)", ag.ID, ag.Model.Provider, providers.Names()),
					Context: map[string]any{"agentId": ag.ID, "provider": ag.Model.Provider}}))
			}
		}
		if _, err := os.Stat(filepath.Join(p.Dir, "agents", ag.ID, "prompt.md")); errors.Is(err, fs.ErrNotExist) && a.fromFile(ag.ID) {
			warnings = append(warnings, fmt.Sprintf("agents/%s: no prompt.md: agent %q runs with no system prompt", ag.ID, ag.ID))
		}
	}
	// A replay model's transcript is opened when the first run calls it;
	// open each now so a missing or malformed one fails here, not every
	// run. Other providers are left alone: their factories need
	// credentials that a build machine may rightly lack.
	for _, ag := range p.Agents {
		if ag.Providers != nil || !a.isReplay(ag.Model.Provider) || ag.Model.Model == "" {
			continue
		}
		if f, ok := providers[ag.Model.Provider]; ok {
			if _, err := f(ag.Model.Model); err != nil {
				problems = append(problems, p.At("agents/"+ag.ID+"/agent.yaml", "$.model.model", err))
			}
		}
	}
	cfg := p.Config
	if cfg.Store == nil {
		problems = append(problems, p.At("bread.yaml", "$", &core.BreadError{Code: core.CodeStoreNotConfigured,
			Message: "no store configured: add `store: sqlite` (or memory, postgres) to bread.yaml"}))
	} else if err := a.knownStore(cfg.Store); err != nil {
		problems = append(problems, err)
	}
	if _, err := a.wiring(); err != nil && serving {
		problems = append(problems, err)
	}
	if serving && len(cfg.Server.Auth) > 0 {
		if _, err := a.authStrategies(cfg.Server.Auth); err != nil {
			problems = append(problems, err)
		}
		if _, err := a.streamTokens(); err != nil {
			problems = append(problems, err)
		}
	}
	for _, cycle := range p.DelegationCycles() {
		if cfg.MaxDelegationDepth > 0 {
			warnings = append(warnings, cycle.Error()+fmt.Sprintf(" (allowed: delegation.maxDepth is %d)", cfg.MaxDelegationDepth))
			continue
		}
		problems = append(problems, cycle)
	}
	return problems, warnings
}

// fromFile reports whether agent id was loaded from an agents/<id> folder
// (not added from Go through Options.Agents).
func (a *app) fromFile(id string) bool {
	_, err := os.Stat(filepath.Join(a.project.Dir, "agents", id, "agent.yaml"))
	return err == nil
}

// refuseInvalid runs checkProject for a serving command: it prints each
// problem and warning as `bread build` does and reports whether the
// project may be served.
func (a *app) refuseInvalid(ctx context.Context) bool {
	problems, warnings := a.checkProject()
	for _, w := range warnings {
		a.log.WarnContext(ctx, "bread: "+w)
	}
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "[bread] %v\n", p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(a.stderr, "bread: the project has %d problem(s) (bread build lists the same)\n", len(problems))
		return true
	}
	return false
}

// refuseToRun runs checkProjectFor a terminal command that runs agents: it
// prints each problem as `bread build` does (warnings are build's to say)
// and reports whether the project must not run.
func (a *app) refuseToRun() bool {
	problems, _ := a.checkProjectFor(false)
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "[bread] %v\n", p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(a.stderr, "bread: the project has %d problem(s) (bread build lists the same)\n", len(problems))
		return true
	}
	return false
}
