package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
)

// A Go-built config naming an agent that does not exist is refused when
// the instance starts, and the error names the Config field path.
func TestGoBuiltReferencesNameTheirField(t *testing.T) {
	boss := func(roster ...string) *core.Agent {
		a := textAgent("boss")
		a.Supervisor = &core.SupervisorConfig{}
		for _, id := range roster {
			a.Supervisor.Agents = append(a.Supervisor.Agents, core.SubAgent{AgentID: id})
		}
		return a
	}
	looper := &core.Agent{ID: "looper", Model: mockModel(), Loop: &core.LoopConfig{Pool: []string{"writer", "ghost"}, MaxIterations: 2}}
	for _, tt := range []struct {
		name  string
		cfg   engine.Config
		field string
	}{
		{"an entrypoint", engine.Config{Agents: []*core.Agent{textAgent("writer")}, Entrypoints: []string{"writer", "ghost"}}, "Entrypoints[1]"},
		{"a pipeline step", engine.Config{Agents: []*core.Agent{textAgent("writer")}, Pipelines: map[string][]core.PipelineStep{
			"review": {{Type: core.StepAgent, AgentID: "writer"}, {Type: core.StepAgent, AgentID: "ghost"}},
		}}, `Pipelines["review"][1].AgentID`},
		{"a parallel branch", engine.Config{Agents: []*core.Agent{textAgent("writer")}, Pipelines: map[string][]core.PipelineStep{
			"fan": {{Type: core.StepParallel, Steps: []core.PipelineStep{{Type: core.StepAgent, AgentID: "writer"}, {Type: core.StepAgent, AgentID: "ghost"}}}},
		}}, `Pipelines["fan"][0].Steps[1].AgentID`},
		{"a route", engine.Config{Agents: []*core.Agent{textAgent("writer"), textAgent("router")}, Pipelines: map[string][]core.PipelineStep{
			"route": {{Type: core.StepRoute, Decider: "router", Routes: map[string]string{"no": "writer", "yes": "ghost"}}},
		}}, `Pipelines["route"][0].Routes["yes"]`},
		{"a supervisor's roster", engine.Config{Agents: []*core.Agent{textAgent("writer"), boss("writer", "ghost")}}, `Agents[id="boss"].Supervisor.Agents[1].AgentID`},
		{"a loop pool", engine.Config{Agents: []*core.Agent{textAgent("writer"), looper}}, `Agents[id="looper"].Loop.Pool[1]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Store = memory.New()
			in, err := engine.New(tt.cfg)
			if err == nil {
				err = in.Start(context.Background())
				_ = in.Stop(context.Background())
			}
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeAgentNotFound {
				t.Fatalf("want AGENT_NOT_FOUND, got %v", err)
			}
			if be.Context["field"] != tt.field || !strings.HasPrefix(be.Message, tt.field+": ") || !strings.Contains(be.Message, `"ghost"`) {
				t.Errorf("error %q (field %v), want it to start with the field %s and name the agent", be.Message, be.Context["field"], tt.field)
			}
		})
	}
}
