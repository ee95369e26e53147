package project

import (
	"fmt"
	"strings"

	"github.com/breadai/bread/core"
)

// delegationEdge is one delegation an agent.yaml allows: a supervisor's
// sub-agent or a loop's pool member, with the YAML path naming it.
type delegationEdge struct {
	to, path string
}

func delegationEdges(a *core.Agent) []delegationEdge {
	var out []delegationEdge
	if a.Supervisor != nil {
		for i, sa := range a.Supervisor.Agents {
			out = append(out, delegationEdge{sa.AgentID, fmt.Sprintf("$.supervisor.agents[%d].agentId", i)})
		}
	}
	if a.Loop != nil {
		for i, id := range a.Loop.Pool {
			out = append(out, delegationEdge{id, fmt.Sprintf("$.loop.pool[%d]", i)})
		}
	}
	return out
}

// DelegationCycles returns an error for every cycle of delegations among
// the project's agents (a → b → a through supervisor rosters, or an agent
// to itself through its loop pool), at the file and line of the edge that
// closes it, walking agents and their edges in order. Such agents recurse
// until the delegation depth limit ends the run (DELEGATION_DEPTH_EXCEEDED);
// bread build and start refuse them unless bread.yaml sets
// delegation.maxDepth, and then only warn.
func (p *Project) DelegationCycles() []*Error {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var out []*Error
	var visit func(a *core.Agent)
	visit = func(a *core.Agent) {
		state[a.ID] = open
		stack = append(stack, a.ID)
		for _, e := range delegationEdges(a) {
			next, local := p.Agent(e.to)
			if !local {
				continue
			}
			switch state[e.to] {
			case unseen:
				visit(next)
			case open:
				from := len(stack) - 1
				for stack[from] != e.to {
					from--
				}
				chain := append(append([]string(nil), stack[from:]...), e.to)
				rel := "agents/" + a.ID + "/agent.yaml"
				out = append(out, &Error{File: rel, Line: p.files[rel].line(e.path), Err: &core.BreadError{
					Code: core.CodeInvalidConfig,
					Message: "delegation cycle " + strings.Join(chain, " → ") + ": these agents can delegate to each other without end, " +
						"until the delegation depth limit ends the run with " + core.CodeDelegationDepth +
						"; set delegation.maxDepth in bread.yaml to allow it on purpose",
					Context: map[string]any{"cycle": chain, "agentId": a.ID, "subAgentId": e.to},
				}})
			}
		}
		stack = stack[:len(stack)-1]
		state[a.ID] = done
	}
	for _, a := range p.Agents {
		if state[a.ID] == unseen {
			visit(a)
		}
	}
	return out
}
