package a2a

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
)

// MaxInlineFileBytes caps the decoded size of an inline (base64) file part.
const MaxInlineFileBytes = 10 << 20

// inputOf turns a message's parts into a run's input: text parts alone
// joined by newlines, a lone data part its object, a lone file part
// {uri, mimeType?, name?}, any other mix an array of {"text"}, {"data"} and
// {"file"} entries in wire order. An inline file is stored in the blob
// store first and passed by its URL.
func (p *Plugin) inputOf(ctx context.Context, m *a2a.Message) (any, error) {
	if m == nil || len(m.Parts) == 0 {
		return nil, invalidParams("the message has no parts")
	}
	texts := make([]string, 0, len(m.Parts))
	tagged := make([]any, 0, len(m.Parts))
	onlyText := true
	for i, part := range m.Parts {
		switch v := part.(type) {
		case a2a.TextPart:
			texts = append(texts, v.Text)
			tagged = append(tagged, map[string]any{"text": v.Text})
		case a2a.DataPart:
			if v.Data == nil {
				return nil, invalidParams(fmt.Sprintf("part %d: a data part needs a JSON object", i))
			}
			onlyText = false
			tagged = append(tagged, map[string]any{"data": v.Data})
		case a2a.FilePart:
			f, err := p.fileOf(ctx, i, v)
			if err != nil {
				return nil, err
			}
			onlyText = false
			tagged = append(tagged, map[string]any{"file": f})
		default:
			return nil, invalidParams(fmt.Sprintf("part %d is not a text, data or file part", i))
		}
	}
	if onlyText {
		return strings.Join(texts, "\n"), nil
	}
	if len(tagged) == 1 {
		for _, v := range tagged[0].(map[string]any) {
			return v, nil
		}
	}
	return tagged, nil
}

// fileOf is a file part as {uri, mimeType?, name?}.
func (p *Plugin) fileOf(ctx context.Context, i int, fp a2a.FilePart) (map[string]any, error) {
	out := map[string]any{}
	var meta a2a.FileMeta
	switch f := fp.File.(type) {
	case a2a.FileURI:
		if f.URI == "" {
			return nil, invalidParams(fmt.Sprintf("part %d: a file part needs a uri", i))
		}
		out["uri"], meta = f.URI, f.FileMeta
	case a2a.FileBytes:
		blobs := p.rt.Blobs()
		if !blobs.Configured() {
			return nil, invalidParams(fmt.Sprintf("part %d: inline file bytes need a blob store, and none is configured; send the file by uri", i))
		}
		if base64.StdEncoding.DecodedLen(len(f.Bytes)) > MaxInlineFileBytes+2 {
			return nil, invalidParams(fmt.Sprintf("part %d: inline file bytes exceed the %d-byte limit", i, MaxInlineFileBytes))
		}
		data, err := base64.StdEncoding.DecodeString(f.Bytes)
		if err != nil || len(data) > MaxInlineFileBytes {
			return nil, invalidParams(fmt.Sprintf("part %d: inline file bytes are not base64 within the %d-byte limit", i, MaxInlineFileBytes))
		}
		mime := f.MimeType
		if mime == "" {
			mime = "application/octet-stream"
		}
		ref, err := blobs.Put(ctx, strings.NewReader(string(data)), mime)
		if err != nil {
			return nil, fmt.Errorf("a2a: storing an inline file: %w", err)
		}
		out["uri"], meta = ref.URL, f.FileMeta
	default:
		return nil, invalidParams(fmt.Sprintf("part %d: a file part needs uri or bytes", i))
	}
	if meta.MimeType != "" {
		out["mimeType"] = meta.MimeType
	}
	if meta.Name != "" {
		out["name"] = meta.Name
	}
	return out, nil
}

// outputParts is a run's output as parts: a string a text part, a
// file-shaped object ({"kind": "file", "uri", ...}) a file part, any other
// object a data part, anything else a data part {"value": output}. nil has
// no part.
func outputParts(output any) []a2a.Part {
	switch v := output.(type) {
	case nil:
		return nil
	case string:
		if v == "" {
			return nil
		}
		return []a2a.Part{a2a.TextPart{Text: v}}
	}
	obj := asObject(output)
	if obj == nil {
		return []a2a.Part{a2a.DataPart{Data: map[string]any{"value": output}}}
	}
	if kind, _ := obj["kind"].(string); kind == "file" {
		if uri, _ := obj["uri"].(string); uri != "" {
			mime, _ := obj["mimeType"].(string)
			name, _ := obj["name"].(string)
			return []a2a.Part{filePart(uri, mime, name)}
		}
	}
	return []a2a.Part{a2a.DataPart{Data: obj}}
}

// asObject is v as a JSON object, nil when it is not one.
func asObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

func filePart(uri, mime, name string) a2a.FilePart {
	return a2a.FilePart{File: a2a.FileURI{URI: uri, FileMeta: a2a.FileMeta{MimeType: mime, Name: name}}}
}
