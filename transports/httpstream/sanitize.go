package httpstream

import (
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// ClientSafe returns c as a client may see it: the errors of agent:error and
// tool:error crumbs are reduced to code and message, and a generated file
// named by a path on the server's disk is named by its route instead. Crumbs are shared with
// the log and the listeners, so a crumb that needs changing is copied, never
// modified; every other crumb is returned as it is.
func ClientSafe(c core.Crumb) core.Crumb {
	switch v := c.(type) {
	case *core.FileGenerated:
		if uri, ok := clientURI(v.RunID, v.URI); ok {
			cp := *v
			cp.URI = uri
			return &cp
		}
	case *core.AgentRunEnd:
		var files []core.FileOutput
		for i, f := range v.Files {
			if uri, ok := clientURI(v.RunID, f.URI); ok {
				if files == nil {
					files = slices.Clone(v.Files)
				}
				files[i].URI = uri
			}
		}
		if files != nil {
			cp := *v
			cp.Files = files
			return &cp
		}
	case *core.AgentError:
		cp := *v
		cp.Error = safeError(v.Error)
		return &cp
	case *core.ToolError:
		cp := *v
		cp.Error = safeError(v.Error)
		return &cp
	}
	return c
}

func safeError(e *core.BreadError) *core.BreadError {
	if e == nil {
		return &core.BreadError{Code: core.CodeInternalError, Message: "internal server error"}
	}
	return e.ClientSafe()
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
