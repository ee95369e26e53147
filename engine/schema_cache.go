package engine

import (
	"bytes"
	"encoding/json"
	"sync"
)

// maxCachedSchemas bounds a schemaCache. Tools whose schemas change without
// end (a plugin that resolves them anew for every run) would otherwise grow
// it for ever; past the bound it starts over.
const maxCachedSchemas = 4096

// schemaCache keeps compiled JSON Schemas by their text, so a run does not
// compile its tools' schemas again: compiling one cost more than the rest
// of assembling the toolset, and a tool's schema seldom changes. A
// compiled schema is read-only, so runs share it.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*compiledSchema
}

// compile is compileSchema, from the cache when the same text compiled
// before. A schema that does not compile is not cached.
func (c *schemaCache) compile(what string, raw json.RawMessage) (*compiledSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	c.mu.Lock()
	cs, ok := c.m[string(raw)]
	c.mu.Unlock()
	if ok {
		return cs, nil
	}
	cs, err := compileSchema(what, raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = make(map[string]*compiledSchema)
	}
	c.m[string(raw)] = cs
	c.mu.Unlock()
	return cs, nil
}
