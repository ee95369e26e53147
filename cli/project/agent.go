package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/breadai/bread/core"
)

type modelFile struct {
	Provider        string         `yaml:"provider"`
	Model           string         `yaml:"model"`
	Settings        settingsFile   `yaml:"settings"`
	ProviderOptions map[string]any `yaml:"providerOptions"`
}

type settingsFile struct {
	MaxOutputTokens  *int     `yaml:"maxOutputTokens"`
	Temperature      *float64 `yaml:"temperature"`
	TopP             *float64 `yaml:"topP"`
	TopK             *int     `yaml:"topK"`
	PresencePenalty  *float64 `yaml:"presencePenalty"`
	FrequencyPenalty *float64 `yaml:"frequencyPenalty"`
	StopSequences    []string `yaml:"stopSequences"`
	Seed             *int64   `yaml:"seed"`
}

func (m modelFile) core() core.ModelRef {
	s := m.Settings
	return core.ModelRef{
		Provider: m.Provider, Model: m.Model, ProviderOptions: normalizeMap(m.ProviderOptions),
		Settings: core.ModelSettings{
			MaxOutputTokens: s.MaxOutputTokens, Temperature: s.Temperature, TopP: s.TopP, TopK: s.TopK,
			PresencePenalty: s.PresencePenalty, FrequencyPenalty: s.FrequencyPenalty, StopSequences: s.StopSequences, Seed: s.Seed,
		},
	}
}

func normalizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return normalize(m).(map[string]any)
}

type agentFile struct {
	Description  string    `yaml:"description"`
	Model        modelFile `yaml:"model"`
	InputSchema  any       `yaml:"inputSchema"`
	OutputSchema any       `yaml:"outputSchema"`
	Output       struct {
		Format string `yaml:"format"`
	} `yaml:"output"`
	Steps struct {
		Max int `yaml:"max"`
	} `yaml:"steps"`
	Permissions struct {
		Allow []string `yaml:"allow"`
		Ask   []string `yaml:"ask"`
		Deny  []string `yaml:"deny"`
	} `yaml:"permissions"`
	Tasks     []string `yaml:"tasks"`
	Knowledge *struct {
		AutoInject bool `yaml:"autoInject"`
		MaxTokens  int  `yaml:"maxTokens"`
	} `yaml:"knowledge"`
	Documents *struct {
		Root                 string   `yaml:"root"`
		MaxBytes             int64    `yaml:"maxBytes"`
		AllowHosts           []string `yaml:"allowHosts"`
		AllowPrivateNetworks bool     `yaml:"allowPrivateNetworks"`
	} `yaml:"documents"`
	Supervisor *struct {
		Max    int `yaml:"max"`
		Agents []struct {
			AgentID    string `yaml:"agentId"`
			Visibility string `yaml:"visibility"`
			Max        int    `yaml:"max"`
		} `yaml:"agents"`
	} `yaml:"supervisor"`
	Loop *struct {
		Pool          []string          `yaml:"pool"`
		MaxIterations int               `yaml:"maxIterations"`
		ErrorHandling errorHandlingFile `yaml:"errorHandling"`
	} `yaml:"loop"`
	ErrorHandling errorHandlingFile `yaml:"errorHandling"`
	Concurrency   string            `yaml:"concurrency"`
	// OnLost is "fail", "retry" or {action: retry, maxAttempts: 3}.
	OnLost  any            `yaml:"onLost"`
	Plugins map[string]any `yaml:"plugins"`
}

// loadAgent reads agents/<id>/: agent.yaml, prompt.md, tools, skills and
// evals.
func (l *loader) loadAgent(dir string) (*core.Agent, []*EvalSuite, error) {
	id := filepath.Base(dir)
	var raw agentFile
	f, err := l.readYAML(filepath.Join(dir, "agent.yaml"), &raw)
	if err != nil {
		return nil, nil, err
	}
	if err := core.ValidateID("agent", id); err != nil {
		return nil, nil, errorAt(f.rel, 0, err)
	}
	a := &core.Agent{
		ID: id, Description: raw.Description, Model: raw.Model.core(),
		Output:        core.OutputFormat{Format: raw.Output.Format},
		MaxSteps:      raw.Steps.Max,
		Permissions:   core.Permissions{Allow: raw.Permissions.Allow, Ask: raw.Permissions.Ask, Deny: raw.Permissions.Deny},
		Tasks:         raw.Tasks,
		ErrorHandling: raw.ErrorHandling.core(),
		Concurrency:   core.ConcurrencyPolicy(raw.Concurrency),
		Plugins:       normalizeMap(raw.Plugins),
	}
	if !a.Concurrency.Valid() {
		return nil, nil, f.errorf("$.concurrency", "concurrency %q is not reject, enqueue, interrupt or rollback", raw.Concurrency)
	}
	if a.OnLost, err = lostPolicy(f, raw.OnLost); err != nil {
		return nil, nil, err
	}
	switch format := a.Output.Format; {
	case format == "", format == core.FormatText, format == core.FormatMarkdown, format == core.FormatJSON:
	case containsString(l.formats, format):
	default:
		return nil, nil, f.errorf("$.output.format", "output format %q is not text, markdown or json (custom formats are registered from Go)", a.Output.Format)
	}
	if a.Model.Provider == "" || a.Model.Model == "" {
		return nil, nil, f.errorf("$.model", "model needs a provider and a model")
	}
	if a.InputSchema, err = f.schemaAt("$.inputSchema", raw.InputSchema); err != nil {
		return nil, nil, err
	}
	if a.OutputSchema, err = f.schemaAt("$.outputSchema", raw.OutputSchema); err != nil {
		return nil, nil, err
	}
	for _, sel := range append(append(cloneStrings(a.Permissions.Allow), a.Permissions.Ask...), a.Permissions.Deny...) {
		if _, err := core.ParseSelector(sel); err != nil {
			return nil, nil, errorAt(f.rel, selectorLine(f, sel), err)
		}
	}
	if k := raw.Knowledge; k != nil {
		a.Knowledge = &core.KnowledgeConfig{AutoInject: k.AutoInject, MaxTokens: k.MaxTokens}
	}
	if d := raw.Documents; d != nil {
		root := d.Root
		if root != "" && !filepath.IsAbs(root) {
			root = filepath.Join(l.dir, root)
		}
		a.Documents = &core.DocumentConfig{Root: root, MaxBytes: d.MaxBytes, AllowHosts: d.AllowHosts, AllowPrivateNetworks: d.AllowPrivateNetworks}
	}
	if s := raw.Supervisor; s != nil {
		a.Supervisor = &core.SupervisorConfig{Max: s.Max}
		for _, sa := range s.Agents {
			a.Supervisor.Agents = append(a.Supervisor.Agents, core.SubAgent{AgentID: sa.AgentID, Visibility: core.Visibility(sa.Visibility), Max: sa.Max})
		}
	}
	if lp := raw.Loop; lp != nil {
		a.Loop = &core.LoopConfig{Pool: lp.Pool, MaxIterations: lp.MaxIterations, ErrorHandling: lp.ErrorHandling.core()}
	}
	if prompt, err := os.ReadFile(filepath.Join(dir, "prompt.md")); err == nil {
		a.Prompt = strings.TrimSpace(string(prompt))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, errorAt(l.rel(filepath.Join(dir, "prompt.md")), 0, err)
	}
	if a.Tools, a.HumanTools, err = l.loadTools(filepath.Join(dir, "tools"), dir); err != nil {
		return nil, nil, err
	}
	if a.Skills, err = l.loadSkills(filepath.Join(dir, "skills")); err != nil {
		return nil, nil, err
	}
	// With the agent's tools and skills known, a selector naming none of
	// them is a typo that would silently turn a gate off: refuse it at its
	// line. (Plugin selectors are checked when the engine knows the
	// plugins.)
	if err := core.CheckPermissionTargets(a, core.PermissionTargets{Decisions: l.decisions}); err != nil {
		sel, _ := core.AsBreadError(err, core.CodeInvalidPermission).Context["selector"].(string)
		return nil, nil, errorAt(f.rel, selectorLine(f, sel), err)
	}
	evals, err := l.loadEvals(filepath.Join(dir, "evals"), id)
	if err != nil {
		return nil, nil, err
	}
	return a, evals, nil
}

func cloneStrings(s []string) []string { return append([]string(nil), s...) }

// selectorLine finds the line of a permission selector in agent.yaml.
func selectorLine(f *yamlFile, sel string) int {
	for _, list := range []string{"allow", "ask", "deny"} {
		for i := 0; ; i++ {
			path := fmt.Sprintf("$.permissions.%s[%d]", list, i)
			line := f.line(path)
			if line == 0 {
				break
			}
			if strings.Contains(lineText(f.src, line), sel) {
				return line
			}
		}
	}
	return f.line("$.permissions")
}

func lineText(src []byte, line int) string {
	lines := strings.Split(string(src), "\n")
	if line-1 < len(lines) && line > 0 {
		return lines[line-1]
	}
	return ""
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// lostPolicy reads agent.yaml's onLost: "fail", "retry", or a mapping
// {action: retry, maxAttempts: 3}.
func lostPolicy(f *yamlFile, raw any) (core.LostPolicy, error) {
	var p core.LostPolicy
	switch v := normalize(raw).(type) {
	case nil:
		return p, nil
	case string:
		p.Action = core.LostAction(v)
	case map[string]any:
		for k := range v {
			if k != "action" && k != "maxAttempts" {
				return p, f.errorf("$.onLost."+k, "onLost has no field %q (action, maxAttempts)", k)
			}
		}
		action, ok := v["action"].(string)
		if !ok {
			return p, f.errorf("$.onLost.action", "onLost.action must be fail or retry")
		}
		p.Action = core.LostAction(action)
		if m, ok := v["maxAttempts"]; ok {
			n, isInt := wholeNumber(m)
			if !isInt || n < 1 || n > 100 {
				return p, f.errorf("$.onLost.maxAttempts", "onLost.maxAttempts must be a whole number from 1 to 100")
			}
			p.MaxAttempts = n
		}
	default:
		return p, f.errorf("$.onLost", "onLost must be fail, retry or {action: retry, maxAttempts: N}")
	}
	if !p.Valid() {
		return p, f.errorf("$.onLost", "onLost %q is not fail or retry", string(p.Action))
	}
	return p, nil
}

// wholeNumber is v as an int when it is a whole number of any of the
// types a YAML decoder produces.
func wholeNumber(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), n <= 1<<31
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}
