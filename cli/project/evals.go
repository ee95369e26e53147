package project

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
)

// EvalSuite is one agents/<id>/evals/*.eval.yaml: cases run against an
// agent and scored.
type EvalSuite struct {
	File    string
	AgentID string
	// Type tags the suite: functional (default), prompt-injection,
	// jailbreak, data-exfiltration.
	Type  string
	Cases []EvalCase
}

// EvalCase is one input and the scorers its output must pass.
type EvalCase struct {
	Name    string
	Input   json.RawMessage
	Skill   string
	Scorers []Scorer
	Line    int
}

// Scorer checks an output.
type Scorer struct {
	// Type is exact, contains, regex, llmJudge or custom.
	Type     string
	Expected string
	Pattern  *regexp.Regexp
	// Prompt and Model configure llmJudge ("provider/model").
	Prompt string
	Model  string
	// Command is the custom scorer's program: the output as JSON on stdin,
	// exit 0 to pass.
	Command []string
}

// The eval suite types.
var evalTypes = map[string]bool{"functional": true, "prompt-injection": true, "jailbreak": true, "data-exfiltration": true}

type evalFile struct {
	AgentID string `yaml:"agentId"`
	Type    string `yaml:"type"`
	Cases   []struct {
		Name    string `yaml:"name"`
		Input   any    `yaml:"input"`
		Skill   string `yaml:"skill"`
		Scorers []struct {
			Type     string `yaml:"type"`
			Expected any    `yaml:"expected"`
			Pattern  string `yaml:"pattern"`
			Prompt   string `yaml:"prompt"`
			Model    string `yaml:"model"`
			Command  any    `yaml:"command"`
		} `yaml:"scorers"`
	} `yaml:"cases"`
}

// loadEvals reads an agent's evals/*.eval.yaml.
func (l *loader) loadEvals(dir, agentID string) ([]*EvalSuite, error) {
	paths, err := yamlFiles(dir)
	if err != nil {
		return nil, errorAt(l.rel(dir), 0, err)
	}
	var suites []*EvalSuite
	for _, path := range paths {
		if m, _ := filepath.Match("*.eval.y*ml", filepath.Base(path)); !m {
			continue
		}
		var raw evalFile
		f, err := l.readYAML(path, &raw)
		if err != nil {
			return nil, err
		}
		s := &EvalSuite{File: f.rel, AgentID: raw.AgentID, Type: raw.Type}
		if s.AgentID == "" {
			s.AgentID = agentID
		}
		if s.Type == "" {
			s.Type = "functional"
		}
		if !evalTypes[s.Type] {
			return nil, f.errorf("$.type", "eval type %q is not functional, prompt-injection, jailbreak or data-exfiltration", s.Type)
		}
		if len(raw.Cases) == 0 {
			return nil, f.errorf("$", "an eval suite needs cases")
		}
		for i, rc := range raw.Cases {
			at := fmt.Sprintf("$.cases[%d]", i)
			c := EvalCase{Name: rc.Name, Skill: rc.Skill, Line: f.line(at)}
			if c.Name == "" {
				c.Name = fmt.Sprintf("case %d", i+1)
			}
			if c.Input, err = toJSON(rc.Input); err != nil {
				return nil, f.errAt(at+".input", err)
			}
			if len(rc.Scorers) == 0 {
				return nil, f.errorf(at, "case %q needs scorers", c.Name)
			}
			for j, rs := range rc.Scorers {
				sat := fmt.Sprintf("%s.scorers[%d]", at, j)
				sc := Scorer{Type: rs.Type, Prompt: rs.Prompt, Model: rs.Model}
				if rs.Expected != nil {
					if s, ok := rs.Expected.(string); ok {
						sc.Expected = s
					} else {
						b, _ := toJSON(rs.Expected)
						sc.Expected = string(b)
					}
				}
				switch rs.Type {
				case "exact", "contains":
					if rs.Expected == nil {
						return nil, f.errorf(sat, "a %s scorer needs expected", rs.Type)
					}
				case "regex":
					if sc.Pattern, err = regexp.Compile(rs.Pattern); err != nil || rs.Pattern == "" {
						return nil, f.errorf(sat+".pattern", "a regex scorer needs a valid pattern: %v", err)
					}
				case "llmJudge":
					if rs.Prompt == "" {
						return nil, f.errorf(sat, "an llmJudge scorer needs a prompt")
					}
				case "custom":
					if sc.Command, err = commandArgs(rs.Command); err != nil {
						return nil, f.errAt(sat+".command", err)
					}
				default:
					return nil, f.errorf(sat+".type", "scorer type %q is not exact, contains, regex, llmJudge or custom", rs.Type)
				}
				c.Scorers = append(c.Scorers, sc)
			}
			s.Cases = append(s.Cases, c)
		}
		suites = append(suites, s)
	}
	return suites, nil
}
