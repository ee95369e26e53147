package project

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"

	"github.com/breadai/bread/core"
)

// Error is a configuration error at a place in a project file.
type Error struct {
	File string // relative to the project directory
	Line int    // 1-based; 0 when the whole file is at fault
	Err  error  // a *core.BreadError
}

// Error formats as file:line: message.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// errorAt returns an INVALID_CONFIG error (unless err already carries a
// code) at file:line.
func errorAt(file string, line int, err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return &Error{File: file, Line: line, Err: core.AsBreadError(err, core.CodeInvalidConfig)}
}

func errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Err: core.Errorf(core.CodeInvalidConfig, format, args...)}
}

// fromYAML turns a goccy/go-yaml error into an Error at its line.
func fromYAML(file string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			line = tok.Position.Line
		}
		return &Error{File: file, Line: line, Err: &core.BreadError{Code: core.CodeInvalidConfig, Message: ye.GetMessage()}}
	}
	return errorAt(file, 0, err)
}
