package httpstream

import (
	"encoding/json"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// ClientSafe returns what of c a client may see, as clientViews decides
// for c's type: the crumb as it is, or a copy with the server's own parts
// taken out (an error reduced by core.Sanitize to code and message, a
// generated file on the server's disk named by its route instead). A crumb
// whose type has no view, or that is not core's Go type for its type,
// shows its type and base only. Crumbs are shared with the log and the
// listeners, so a crumb that needs changing is copied, never modified.
func ClientSafe(c core.Crumb) core.Crumb {
	if c == nil {
		return nil
	}
	if view, ok := clientViews[c.CrumbType()]; ok {
		if v := view(c); v != nil {
			return v
		}
	}
	return baseOnly(c)
}

// A view is what a client sees of a crumb of one type, or nil when c is not
// core's Go type for it (nil too) and shows its base only.
type view func(c core.Crumb) core.Crumb

// clientViews is the allowlist of what leaves the server, one decision per
// crumb type of core.CrumbTypes (TestClientViewsDecideEveryType fails for a
// type added to core without one here; TestClientSafeShowsDecidedFields for
// a field added to a crumb, which a whole view would let through). Every
// field of a crumb carrying an error message is decided here: agent:error's
// and tool:error's pass core.Sanitize; task:end's is a string the engine
// writes through core.Sanitize already (see engine's clientError).
var clientViews = map[string]view{
	core.TypeAgentRunStart:      whole[*core.AgentRunStart],
	core.TypeTextDelta:          whole[*core.TextDelta],
	core.TypeReasoningDelta:     whole[*core.ReasoningDelta],
	core.TypeFileGenerated:      edited(fileGenerated),
	core.TypeToolCall:           whole[*core.ToolCall],
	core.TypeToolInputStart:     whole[*core.ToolInputStart],
	core.TypeToolInputDelta:     whole[*core.ToolInputDelta],
	core.TypeToolInputEnd:       whole[*core.ToolInputEnd],
	core.TypeToolResult:         whole[*core.ToolResult],
	core.TypeToolResultPartial:  whole[*core.ToolResultPartial],
	core.TypeToolError:          edited(toolError),
	core.TypeHumanRequired:      whole[*core.HumanRequired],
	core.TypeHumanResumed:       whole[*core.HumanResumed],
	core.TypeSubagentRunStart:   whole[*core.SubagentRunStart],
	core.TypeSubagentRunEnd:     whole[*core.SubagentRunEnd],
	core.TypePipelineStepStart:  whole[*core.PipelineStepStart],
	core.TypePipelineStepEnd:    whole[*core.PipelineStepEnd],
	core.TypeLoopStart:          whole[*core.LoopStart],
	core.TypeLoopIterationStart: whole[*core.LoopIterationStart],
	core.TypeLoopIterationEnd:   whole[*core.LoopIterationEnd],
	core.TypeLoopEnd:            whole[*core.LoopEnd],
	core.TypeTaskStart:          whole[*core.TaskStart],
	core.TypeTaskEnd:            whole[*core.TaskEnd],
	core.TypeAgentRunEnd:        edited(agentRunEnd),
	core.TypeAgentError:         edited(agentError),
}

// whole shows every field of a crumb of core's Go type T.
func whole[T interface {
	*E
	core.Crumb
}, E any](c core.Crumb) core.Crumb {
	if v, ok := c.(T); ok && v != nil {
		return v
	}
	return nil
}

// edited shows what edit makes of a crumb of core's Go type T.
func edited[T interface {
	*E
	core.Crumb
}, E any](edit func(T) core.Crumb) view {
	return func(c core.Crumb) core.Crumb {
		if v, ok := c.(T); ok && v != nil {
			return edit(v)
		}
		return nil
	}
}

func fileGenerated(v *core.FileGenerated) core.Crumb {
	if uri, ok := clientURI(v.RunID, v.URI); ok {
		cp := *v
		cp.URI = uri
		return &cp
	}
	return v
}

func agentRunEnd(v *core.AgentRunEnd) core.Crumb {
	var files []core.FileOutput
	for i, f := range v.Files {
		if uri, ok := clientURI(v.RunID, f.URI); ok {
			if files == nil {
				files = slices.Clone(v.Files)
			}
			files[i].URI = uri
		}
	}
	if files == nil {
		return v
	}
	cp := *v
	cp.Files = files
	return &cp
}

func agentError(v *core.AgentError) core.Crumb {
	cp := *v
	cp.Error = safeError(v.Error)
	return &cp
}

func toolError(v *core.ToolError) core.Crumb {
	cp := *v
	cp.Error = safeError(v.Error)
	return &cp
}

// safeError is e as core.Sanitize lets a client see it (BreadError's
// ClientSafe): code and message, and for an error that only wraps a plain
// Go error's text, INTERNAL_ERROR.
func safeError(e *core.BreadError) *core.BreadError {
	if e == nil {
		return &core.BreadError{Code: core.CodeInternalError, Message: "internal server error"}
	}
	return e.ClientSafe()
}

// baseOnly is what a client sees of a crumb without a view: its type and
// the fields every crumb shares, nothing of what its type adds.
func baseOnly(c core.Crumb) core.Crumb {
	b := &baseCrumb{typ: c.CrumbType()}
	if v := reflect.ValueOf(c); v.Kind() != reflect.Pointer || !v.IsNil() {
		b.CrumbBase = *c.Base()
	}
	return b
}

// baseCrumb is a crumb of any type reduced to its base.
type baseCrumb struct {
	typ string
	core.CrumbBase
}

func (b *baseCrumb) CrumbType() string { return b.typ }

// MarshalJSON writes the type first, then the base, as every crumb's wire
// form begins.
func (b *baseCrumb) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(b.CrumbBase)
	if err != nil {
		return nil, err
	}
	out := protocol.AppendJSONString([]byte(`{"type":`), b.typ)
	if len(base) > 2 {
		out = append(out, ',')
	}
	return append(out, base[1:]...), nil
}

// failure builds the synthetic agent:error crumb that reports a failure
// before or outside a run, client-safe.
func failure(agentID string, err error) *core.AgentError {
	ce := core.Sanitize(err)
	return &core.AgentError{
		CrumbBase: core.CrumbBase{AgentID: agentID, Timestamp: core.NowMillis()},
		Error:     &core.BreadError{Code: ce.Code, Message: ce.Message},
	}
}

// RunFilePath is the route a run's blob is served at
// (GET /runs/{runId}/files/{key}): the URI a client fetches for a
// file:generated crumb whose blob has key.
func RunFilePath(runID, key string) string {
	u := url.URL{Path: key} // each segment escaped: S3 keys may hold slashes
	return "/runs/" + url.PathEscape(runID) + "/files/" + u.EscapedPath()
}

// clientURI names a generated file by its route when the blob store named
// it by a path on the server's disk (a file: URL, as core/blobfs does): a
// client cannot fetch that and must not learn the server's paths. The
// route finds the blob by the URL's last segment, the store's key.
func clientURI(runID, uri string) (string, bool) {
	if runID == "" || !strings.HasPrefix(uri, "file:") {
		return "", false
	}
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" {
		return "", false
	}
	return RunFilePath(runID, path.Base(u.Path)), true
}
