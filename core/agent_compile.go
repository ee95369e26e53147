package core

// agentRT is an agent as the runner uses it: the definition plus what was
// compiled from it once, at New.
type agentRT struct {
	*Agent
	perms  compiledPermissions
	input  *compiledSchema
	output *compiledSchema
	steps  int
}

const defaultMaxSteps = 20

// compileAgent checks a definition and compiles its permissions and schemas,
// so a typo fails the boot (INVALID_NAME, INVALID_PERMISSION, INVALID_CONFIG)
// instead of the first run.
func compileAgent(a *Agent) (*agentRT, error) {
	if a == nil {
		return nil, &BreadError{Code: CodeInvalidConfig, Message: "Config.Agents holds a nil agent"}
	}
	if err := ValidateID("agent", a.ID); err != nil {
		return nil, err
	}
	rt := &agentRT{Agent: a, steps: a.MaxSteps}
	if rt.steps <= 0 {
		rt.steps = defaultMaxSteps
	}
	var err error
	if rt.perms, err = compilePermissions(a.Permissions); err != nil {
		return nil, withAgent(err, a.ID)
	}
	if rt.input, err = compileSchema("agent "+a.ID+" inputSchema", a.InputSchema); err != nil {
		return nil, err
	}
	if rt.output, err = compileSchema("agent "+a.ID+" outputSchema", a.OutputSchema); err != nil {
		return nil, err
	}
	switch a.Output.Format {
	case "", FormatText, FormatMarkdown, FormatJSON:
	default:
		if a.Output.Parse == nil {
			return nil, Errorf(CodeInvalidConfig, "agent %s: custom output format %q needs a Parse function", a.ID, a.Output.Format)
		}
	}
	seen := map[string]bool{}
	for i := range a.Tools {
		t := &a.Tools[i]
		if err := checkTool(t); err != nil {
			return nil, withAgent(err, a.ID)
		}
		leaf := LeafName(ToolOrigin{Scope: ScopeTool, Name: t.Name})
		if seen[leaf] {
			return nil, collision(leaf)
		}
		seen[leaf] = true
	}
	for _, h := range a.HumanTools {
		if err := ValidateName("human tool", h.Name); err != nil {
			return nil, withAgent(err, a.ID)
		}
		leaf := LeafName(ToolOrigin{Scope: ScopeHuman, Name: h.Name})
		if seen[leaf] {
			return nil, collision(leaf)
		}
		seen[leaf] = true
		if _, err := compileSchema("human tool "+h.Name+" schema", h.Schema); err != nil {
			return nil, err
		}
	}
	for _, sk := range a.Skills {
		if err := ValidateName("skill", sk.ID); err != nil {
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
			return nil, Errorf(CodeInvalidConfig, "agent %s: a supervisor needs at least one sub-agent", a.ID)
		}
		for _, sa := range sc.Agents {
			if err := ValidateID("sub-agent", sa.AgentID); err != nil {
				return nil, withAgent(err, a.ID)
			}
			switch sa.Visibility {
			case "", Passthrough, Mediate, Hidden:
			default:
				return nil, Errorf(CodeInvalidConfig, "agent %s: sub-agent %s has unknown visibility %q (passthrough, mediate or hidden)", a.ID, sa.AgentID, sa.Visibility)
			}
		}
	}
	if lc := a.Loop; lc != nil {
		if len(lc.Pool) == 0 || lc.MaxIterations < 1 {
			return nil, Errorf(CodeInvalidConfig, "agent %s: a loop needs a non-empty pool and maxIterations >= 1", a.ID)
		}
	}
	return rt, nil
}

// checkTool validates a tool's name and shape.
func checkTool(t *Tool) error {
	if err := ValidateName("tool", t.Name); err != nil {
		return err
	}
	if (t.Execute == nil) == (t.ExecuteStream == nil) {
		return Errorf(CodeInvalidConfig, "tool %s must set exactly one of Execute and ExecuteStream", t.Name)
	}
	if _, err := compileSchema("tool "+t.Name+" inputSchema", t.InputSchema); err != nil {
		return err
	}
	return nil
}

func collision(leaf string) *BreadError {
	return &BreadError{
		Code:    CodeToolNameCollision,
		Message: "several tools resolve to the model-facing name " + quoteTruncated(leaf) + "; rename one",
		Context: map[string]any{"leaf": leaf},
	}
}

func withAgent(err error, agentID string) error {
	if be, ok := err.(*BreadError); ok {
		cp := be.WithContext("agentId", agentID)
		cp.Message = "agent " + agentID + ": " + be.Message
		return cp
	}
	return err
}
