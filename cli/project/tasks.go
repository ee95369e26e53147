package project

import (
	"path/filepath"
	"strings"

	"github.com/breadai/bread/core"
)

type taskFile struct {
	Name          string            `yaml:"name"`
	Description   string            `yaml:"description"`
	Model         modelFile         `yaml:"model"`
	Instructions  string            `yaml:"instructions"`
	InputSchema   any               `yaml:"inputSchema"`
	OutputSchema  any               `yaml:"outputSchema"`
	ErrorHandling errorHandlingFile `yaml:"errorHandling"`
}

// loadTasks reads tasks/*.yaml.
func (l *loader) loadTasks(dir string) ([]*core.Task, error) {
	paths, err := yamlFiles(dir)
	if err != nil {
		return nil, errorAt(l.rel(dir), 0, err)
	}
	var tasks []*core.Task
	for _, path := range paths {
		var raw taskFile
		f, err := l.readYAML(path, &raw)
		if err != nil {
			return nil, err
		}
		if raw.Name == "" {
			raw.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		if err := core.ValidateName("task", raw.Name); err != nil {
			return nil, f.errAt("$.name", err)
		}
		if raw.Model.Provider == "" || raw.Model.Model == "" {
			return nil, f.errorf("$.model", "task %s needs a model with a provider and a model", raw.Name)
		}
		if raw.OutputSchema == nil {
			return nil, f.errorf("$", "task %s needs an outputSchema", raw.Name)
		}
		t := &core.Task{Name: raw.Name, Description: raw.Description, Model: raw.Model.core(), Instructions: raw.Instructions, ErrorHandling: raw.ErrorHandling.core()}
		if t.InputSchema, err = f.schemaAt("$.inputSchema", raw.InputSchema); err != nil {
			return nil, err
		}
		if t.OutputSchema, err = f.schemaAt("$.outputSchema", raw.OutputSchema); err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}
