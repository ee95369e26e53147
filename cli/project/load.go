package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/breadai/bread/core"
)

// Project is a loaded project directory.
type Project struct {
	// Dir is the project's absolute directory.
	Dir    string
	Config Config
	// Agents are every agents/<id>/ folder, sorted by id.
	Agents []*core.Agent
	Tasks  []*core.Task
	Evals  []*EvalSuite
	// files are the parsed project files by relative name, to locate
	// errors found after loading (Locate).
	files map[string]*yamlFile
}

// Agent returns an agent by id.
func (p *Project) Agent(id string) (*core.Agent, bool) {
	for _, a := range p.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return nil, false
}

// Options tune Load.
type Options struct {
	// LookupEnv resolves ${VAR}; default os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// OutputFormats are custom output format names agent.yaml may use; the
	// caller sets their Parse functions on the loaded agents.
	OutputFormats []string
}

type loader struct {
	dir        string
	formats    []string
	lookup     func(string) (string, bool)
	configFile *yamlFile
	// files are the YAML files read so far, by relative name.
	files map[string]*yamlFile
	// decisions is set when bread.yaml declares deciders, which give every
	// agent core_decide.
	decisions bool
}

// Load reads the project in dir. Its first error is a *Error naming the
// file and line.
func Load(dir string, opts Options) (*Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	l := &loader{dir: abs, lookup: opts.LookupEnv, formats: opts.OutputFormats}
	if l.lookup == nil {
		l.lookup = os.LookupEnv
	}
	cfgPath := filepath.Join(abs, "bread.yaml")
	if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{File: "bread.yaml", Err: core.Errorf(core.CodeInvalidConfig, "no bread.yaml in %s: is this a bread project? (bread init creates one)", abs)}
	}
	p := &Project{Dir: abs}
	if p.Config, err = l.loadConfig(cfgPath); err != nil {
		return nil, err
	}
	l.decisions = len(p.Config.Decisions) > 0
	agentDirs, err := subdirs(filepath.Join(abs, "agents"))
	if err != nil {
		return nil, errorAt("agents", 0, err)
	}
	for _, d := range agentDirs {
		if _, err := os.Stat(filepath.Join(d, "agent.yaml")); errors.Is(err, fs.ErrNotExist) {
			return nil, errorf(l.rel(d), 0, "agent folder has no agent.yaml")
		}
		a, evals, err := l.loadAgent(d)
		if err != nil {
			return nil, err
		}
		p.Agents = append(p.Agents, a)
		p.Evals = append(p.Evals, evals...)
	}
	if p.Tasks, err = l.loadTasks(filepath.Join(abs, "tasks")); err != nil {
		return nil, err
	}
	if err := l.checkReferences(p); err != nil {
		return nil, err
	}
	p.files = l.files
	return p, nil
}

// checkReferences checks that every id bread.yaml and agent.yaml files name
// exists, so a typo fails the load at its line.
func (l *loader) checkReferences(p *Project) error {
	f := l.configFile
	known := func(id string) bool {
		_, local := p.Agent(id)
		_, remote := p.Config.RemoteAgents[id]
		return local || remote
	}
	for i, id := range p.Config.Entrypoints {
		if !known(id) {
			return f.errorf("$.entrypoints["+itoa(i)+"]", "entrypoint %q has no agents/%s folder", id, id)
		}
	}
	var check func(path string, steps []core.PipelineStep) error
	check = func(path string, steps []core.PipelineStep) error {
		for i, s := range steps {
			at := path + "[" + itoa(i) + "]"
			switch s.Type {
			case core.StepAgent, core.StepMap:
				if !known(s.AgentID) {
					return f.errorf(at+".agentId", "pipeline step names unknown agent %q", s.AgentID)
				}
			case core.StepParallel:
				if len(s.Steps) == 0 {
					return f.errorf(at, "a parallel step needs steps")
				}
				if err := check(at+".steps", s.Steps); err != nil {
					return err
				}
			case core.StepRoute:
				if _, ok := p.Config.Decisions[s.Decider]; !ok {
					return f.errorf(at+".decider", "route step names unknown decider %q (declare it under decisions:)", s.Decider)
				}
				for _, agent := range s.Routes {
					if !known(agent) {
						return f.errorf(at+".routes", "route names unknown agent %q", agent)
					}
				}
			default:
				return f.errorf(at+".type", "unknown step type %q (agent, parallel, map or route)", s.Type)
			}
		}
		return nil
	}
	ids := make([]string, 0, len(p.Config.Pipelines))
	for id := range p.Config.Pipelines {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := check("$.pipelines."+id, p.Config.Pipelines[id]); err != nil {
			return err
		}
	}
	tasks := map[string]bool{}
	for _, t := range p.Tasks {
		tasks[t.Name] = true
	}
	for _, a := range p.Agents {
		rel := "agents/" + a.ID + "/agent.yaml"
		for _, t := range a.Tasks {
			if !tasks[t] {
				return &Error{File: rel, Line: lineOfValue(l, rel, t), Err: core.Errorf(core.CodeTaskNotFound, "agent %s lists unknown task %q (no tasks/%s.yaml)", a.ID, t, t)}
			}
		}
		if a.Supervisor != nil {
			for i, sa := range a.Supervisor.Agents {
				if !known(sa.AgentID) {
					return &Error{File: rel, Line: l.files[rel].line(fmt.Sprintf("$.supervisor.agents[%d].agentId", i)), Err: core.Errorf(core.CodeInvalidConfig, "supervisor %s names unknown sub-agent %q", a.ID, sa.AgentID)}
				}
			}
		}
		if a.Loop != nil {
			for i, id := range a.Loop.Pool {
				if !known(id) {
					return &Error{File: rel, Line: l.files[rel].line(fmt.Sprintf("$.loop.pool[%d]", i)), Err: core.Errorf(core.CodeInvalidConfig, "loop of %s names unknown agent %q", a.ID, id)}
				}
			}
		}
	}
	for _, s := range p.Evals {
		if !known(s.AgentID) {
			return errorf(s.File, 0, "eval suite targets unknown agent %q", s.AgentID)
		}
	}
	return nil
}

// lineOfValue finds the first line of a project file mentioning value.
func lineOfValue(l *loader, rel, value string) int {
	b, err := os.ReadFile(filepath.Join(l.dir, rel))
	if err != nil {
		return 0
	}
	for i, line := range splitLines(string(b)) {
		if containsWord(line, value) {
			return i + 1
		}
	}
	return 0
}
