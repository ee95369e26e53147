package core

import "encoding/json"

// AsFileOutput reports whether a run's output is a file reference
// ({kind:"file", uri, mimeType?, name?}) and returns it, in any of the
// shapes an output takes: a FileOutput as a tool returned it, a pointer to
// one, or JSON read back from a crumb log or a bus (json.RawMessage, or a
// decoded map). Every mapper that shows a run's file output asks this one
// function, so they agree on what a file is.
func AsFileOutput(v any) (FileOutput, bool) {
	switch f := v.(type) {
	case FileOutput:
		return f, f.URI != ""
	case *FileOutput:
		if f != nil {
			return *f, f.URI != ""
		}
		return FileOutput{}, false
	case nil, string:
		return FileOutput{}, false
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return FileOutput{}, false
		}
		raw = b
	}
	var w struct {
		Kind     string `json:"kind"`
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Name     string `json:"name"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Kind != "file" || w.URI == "" {
		return FileOutput{}, false
	}
	return FileOutput{URI: w.URI, MimeType: w.MimeType, Name: w.Name}, true
}
