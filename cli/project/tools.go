package project

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// The tool types a tools/*.yaml file can declare.
const (
	ToolCommand = "command" // runs a program: JSON arguments on stdin, JSON result on stdout
	ToolHTTP    = "http"    // calls a URL with the arguments
	ToolHuman   = "human"   // asks a human
)

type toolFile struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Type        string            `yaml:"type"`
	InputSchema any               `yaml:"inputSchema"`
	Schema      any               `yaml:"schema"`
	Credentials []string          `yaml:"credentials"`
	Command     any               `yaml:"command"`
	Env         map[string]string `yaml:"env"`
	Timeout     string            `yaml:"timeout"`
	URL         string            `yaml:"url"`
	Method      string            `yaml:"method"`
	Headers     map[string]string `yaml:"headers"`
	Prompt      string            `yaml:"prompt"`
}

// loadTools reads every *.yaml of a tools (or scripts) directory. Command
// tools run in workDir.
func (l *loader) loadTools(dir, workDir string) ([]core.Tool, []core.HumanToolDef, error) {
	paths, err := yamlFiles(dir)
	if err != nil {
		return nil, nil, errorAt(l.rel(dir), 0, err)
	}
	var tools []core.Tool
	var humans []core.HumanToolDef
	for _, path := range paths {
		var raw toolFile
		f, err := l.readYAML(path, &raw)
		if err != nil {
			return nil, nil, err
		}
		if raw.Name == "" {
			raw.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		if err := core.ValidateName("tool", raw.Name); err != nil {
			return nil, nil, f.errAt("$.name", err)
		}
		schemaSrc := raw.InputSchema
		if schemaSrc == nil {
			schemaSrc = raw.Schema
		}
		schemaPath := "$.inputSchema"
		if raw.InputSchema == nil && raw.Schema != nil {
			schemaPath = "$.schema"
		}
		schema, err := f.schemaAt(schemaPath, schemaSrc)
		if err != nil {
			return nil, nil, err
		}
		if schema == nil {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		switch raw.Type {
		case ToolHuman:
			humans = append(humans, core.HumanToolDef{Name: raw.Name, Description: raw.Description, Prompt: raw.Prompt, Schema: schema})
			continue
		case ToolCommand, "":
			if raw.Type == "" && raw.URL != "" {
				raw.Type = ToolHTTP
				break
			}
			raw.Type = ToolCommand
		case ToolHTTP:
		default:
			return nil, nil, f.errorf("$.type", "unknown tool type %q (command, http or human)", raw.Type)
		}
		timeout := 30 * time.Second
		if raw.Timeout != "" {
			if timeout, err = time.ParseDuration(raw.Timeout); err != nil || timeout <= 0 {
				return nil, nil, f.errorf("$.timeout", "timeout %q is not a positive duration like 30s", raw.Timeout)
			}
		}
		t := core.Tool{Name: raw.Name, Description: raw.Description, InputSchema: schema, Credentials: raw.Credentials}
		switch raw.Type {
		case ToolCommand:
			argv, err := commandArgs(raw.Command)
			if err != nil {
				return nil, nil, f.errAt("$.command", err)
			}
			t.Execute = commandTool{argv: argv, dir: workDir, env: raw.Env, timeout: timeout, credentials: raw.Credentials}.execute
		case ToolHTTP:
			h, err := newHTTPTool(raw, timeout)
			if err != nil {
				return nil, nil, f.errAt("$.url", err)
			}
			t.Execute = h.execute
		}
		tools = append(tools, t)
	}
	return tools, humans, nil
}

// commandArgs reads `command:` as an argv list, or a string run by sh -c.
func commandArgs(v any) ([]string, error) {
	switch c := normalize(v).(type) {
	case string:
		if strings.TrimSpace(c) == "" {
			break
		}
		return []string{"/bin/sh", "-c", c}, nil
	case []any:
		argv := make([]string, len(c))
		for i, a := range c {
			s, ok := a.(string)
			if !ok {
				return nil, core.Errorf(core.CodeInvalidConfig, "command arguments are strings")
			}
			argv[i] = s
		}
		if len(argv) > 0 && argv[0] != "" {
			return argv, nil
		}
	}
	return nil, core.Errorf(core.CodeInvalidConfig, "a command tool needs `command:` (an argument list, or a shell string)")
}
