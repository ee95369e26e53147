package engine

import (
	"encoding/json"
	"maps"

	"github.com/breadai/bread/core"
)

// usageMetaKey keeps, on a suspended run's checkpoints, the usage of each
// model call the run made before it suspended: the resumed run (another
// run value, maybe in another process) starts from them, so its
// agent:run:end counts the whole run's tokens, not only those since the
// answer.
const usageMetaKey = "bread.usage"

// withUsageMeta adds the run's model calls' usage to meta.
func (r *run) withUsageMeta(meta map[string]string) map[string]string {
	if len(r.calls) == 0 {
		return meta
	}
	raw, err := json.Marshal(r.calls)
	if err != nil {
		return meta
	}
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[usageMetaKey] = string(raw)
	return meta
}

// restoreUsage reads back what withUsageMeta kept; a malformed value is
// ignored (the tokens are a report, not the run's state).
func (r *run) restoreUsage(meta map[string]string) {
	raw, ok := meta[usageMetaKey]
	if !ok {
		return
	}
	var calls []core.Usage
	if json.Unmarshal([]byte(raw), &calls) != nil {
		return
	}
	r.calls = calls
	r.usage = core.Usage{}
	for _, u := range calls {
		r.usage = r.usage.Add(u)
	}
}
