package engine

import (
	"fmt"
	"sync"

	"github.com/breadai/bread/core"
)

// agentRT is an agent as the runner uses it: the definition plus what was
// compiled from it once, at New.
type agentRT struct {
	*core.Agent
	perms  core.CompiledPermissions
	input  *compiledSchema
	output *compiledSchema
	steps  int
	// answers are the compiled answer schemas of the human tools, by the
	// name the model calls them (human_<name>).
	answers map[string]*compiledSchema
	// concurrency is the agent's busy-session policy, defaults applied.
	concurrency core.ConcurrencyPolicy

	// The task, knowledge and document tools, built on first use.
	staticOnce sync.Once
	static     []toolSource
	staticErr  error
}

const defaultMaxSteps = 20

// compileAgent checks a definition and compiles its permissions and schemas,
// so a typo fails the boot (INVALID_NAME, INVALID_PERMISSION, INVALID_CONFIG)
// instead of the first run.
func compileAgent(a *core.Agent) (*agentRT, error) {
	if a == nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "Config.Agents holds a nil agent"}
	}
	if err := core.ValidateID("agent", a.ID); err != nil {
		return nil, err
	}
	rt := &agentRT{Agent: a, steps: a.MaxSteps}
	if rt.steps <= 0 {
		rt.steps = defaultMaxSteps
	}
	var err error
	if rt.perms, err = a.Permissions.Compile(); err != nil {
		return nil, withAgent(err, a.ID)
	}
	if rt.input, err = compileSchema("agent "+a.ID+" inputSchema", a.InputSchema); err != nil {
		return nil, err
	}
	if rt.output, err = compileSchema("agent "+a.ID+" outputSchema", a.OutputSchema); err != nil {
		return nil, err
	}
	switch a.Output.Format {
	case "", core.FormatText, core.FormatMarkdown, core.FormatJSON:
	default:
		if a.Output.Parse == nil {
			return nil, core.Errorf(core.CodeInvalidConfig, "agent %s: custom output format %q needs a Parse function", a.ID, a.Output.Format)
		}
	}
	seen := map[string]bool{}
	for i := range a.Tools {
		t := &a.Tools[i]
		if err := checkTool(t); err != nil {
			return nil, withAgent(err, a.ID)
		}
		leaf := core.LeafName(core.ToolOrigin{Scope: core.ScopeTool, Name: t.Name})
		if seen[leaf] {
			return nil, collision(leaf)
		}
		seen[leaf] = true
	}
	for _, h := range a.HumanTools {
		if err := core.ValidateName("human tool", h.Name); err != nil {
			return nil, withAgent(err, a.ID)
		}
		leaf := core.LeafName(core.ToolOrigin{Scope: core.ScopeHuman, Name: h.Name})
		if seen[leaf] {
			return nil, collision(leaf)
		}
		seen[leaf] = true
		cs, err := compileSchema("human tool "+h.Name+" schema", h.Schema)
		if err != nil {
			return nil, err
		}
		if rt.answers == nil {
			rt.answers = map[string]*compiledSchema{}
		}
		rt.answers[leaf] = cs
	}
	for _, sk := range a.Skills {
		if err := core.ValidateName("skill", sk.ID); err != nil {
			return nil, withAgent(err, a.ID)
		}
		for i := range sk.Tools {
			if err := checkTool(&sk.Tools[i]); err != nil {
				return nil, withAgent(err, a.ID)
			}
		}
	}
	if sc := a.Supervisor; sc != nil {
		if len(sc.Agents) == 0 {
			return nil, atField(agentField(a.ID, "Supervisor.Agents"), core.Errorf(core.CodeInvalidConfig, "agent %s: a supervisor needs at least one sub-agent", a.ID))
		}
		for i, sa := range sc.Agents {
			at := agentField(a.ID, fmt.Sprintf("Supervisor.Agents[%d]", i))
			if err := core.ValidateID("sub-agent", sa.AgentID); err != nil {
				return nil, atField(at+".AgentID", withAgent(err, a.ID))
			}
			switch sa.Visibility {
			case "", core.Passthrough, core.Mediate, core.Hidden:
			default:
				return nil, atField(at+".Visibility", core.Errorf(core.CodeInvalidConfig, "agent %s: sub-agent %s has unknown visibility %q (passthrough, mediate or hidden)", a.ID, sa.AgentID, sa.Visibility))
			}
		}
	}
	if lc := a.Loop; lc != nil {
		switch {
		case len(lc.Pool) == 0:
			return nil, atField(agentField(a.ID, "Loop.Pool"), core.Errorf(core.CodeInvalidConfig, "agent %s: a loop needs a non-empty pool", a.ID))
		case lc.MaxIterations < 1:
			return nil, atField(agentField(a.ID, "Loop.MaxIterations"), core.Errorf(core.CodeInvalidConfig, "agent %s: a loop needs maxIterations >= 1", a.ID))
		}
	}
	return rt, nil
}

// checkTool validates a tool's name and shape.
func checkTool(t *core.Tool) error {
	if err := core.ValidateName("tool", t.Name); err != nil {
		return err
	}
	if (t.Execute == nil) == (t.ExecuteStream == nil) {
		return core.Errorf(core.CodeInvalidConfig, "tool %s must set exactly one of Execute and ExecuteStream", t.Name)
	}
	if _, err := compileSchema("tool "+t.Name+" inputSchema", t.InputSchema); err != nil {
		return err
	}
	return nil
}

func collision(leaf string) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeToolNameCollision,
		Message: "several tools resolve to the model-facing name " + quoteTruncated(leaf) + "; rename one",
		Context: map[string]any{"leaf": leaf},
	}
}

func withAgent(err error, agentID string) error {
	if be, ok := err.(*core.BreadError); ok {
		cp := be.WithContext("agentId", agentID)
		cp.Message = "agent " + agentID + ": " + be.Message
		return cp
	}
	return err
}

// agentField is the Config path of a field of agent id, as errors name it
// in Context "field" (a project loader turns it into file:line).
func agentField(id, field string) string { return fmt.Sprintf("Agents[id=%q].%s", id, field) }

// atField sets the Context "field" of a *core.BreadError.
func atField(field string, err error) error {
	if be, ok := err.(*core.BreadError); ok {
		return be.WithContext("field", field)
	}
	return err
}
