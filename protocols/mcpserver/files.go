package mcpserver

import (
	"context"
	"errors"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// fileTemplate is a file a run generated, read from the blob store.
const fileTemplate = "bread://runs/{runId}/files/{key}"

// MaxFileBytes bounds a generated file read with resources/read: its bytes
// travel in one JSON-RPC message (base64 for a binary one). A larger file
// is refused; its blob route still serves it.
const MaxFileBytes = 16 << 20

// fileURI names a run's file as a resource; each part is escaped, so a key
// with slashes (an S3 key) is one segment.
func fileURI(runID, key string) string {
	return "bread://runs/" + url.PathEscape(runID) + "/files/" + url.PathEscape(key)
}

func parseFileURI(uri string) (runID, key string, ok bool) {
	rest, ok := strings.CutPrefix(uri, "bread://runs/")
	if !ok {
		return "", "", false
	}
	r, k, ok := strings.Cut(rest, "/files/")
	if !ok || strings.Contains(k, "/") {
		return "", "", false
	}
	runID, err1 := url.PathUnescape(r)
	key, err2 := url.PathUnescape(k)
	return runID, key, err1 == nil && err2 == nil && runID != "" && key != ""
}

// blobKey is the blob key of a file as a run announced it: the store's URL
// for it (KeyOf), the blob route's path, or a URL whose last segment is the
// key (core/blobfs's file URLs), as the server's blob route reads it.
func blobKey(blobs *core.Blobs, uri, runID string) (string, bool) {
	if k, ok := blobs.KeyOf(uri); ok {
		return k, true
	}
	if rest, ok := strings.CutPrefix(uri, "/runs/"+url.PathEscape(runID)+"/files/"); ok {
		k, err := url.PathUnescape(rest)
		return k, err == nil && k != ""
	}
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" || u.Path == "/" {
		return "", false
	}
	return path.Base(u.Path), true
}

// fileLink is a run's file in a tool result: a resource this server reads
// when the blob store names its key, else the URI the run announced.
func (p *Plugin) fileLink(runID string, f core.FileOutput) *mcp.ResourceLink {
	uri := f.URI
	if blobs := p.rt.Blobs(); blobs.Configured() {
		if k, ok := blobKey(blobs, f.URI, runID); ok {
			uri = fileURI(runID, k)
		}
	}
	return &mcp.ResourceLink{URI: uri, Name: cmpOr(f.Name, f.URI), MIMEType: f.MimeType}
}

// UseOwnership makes f the rule of who reads a run's files (bread's CLI
// passes the server's run-ownership policy, the one its blob route
// applies). Without it, a caller with an identity reads the files of the
// runs it started.
func (p *Plugin) UseOwnership(f core.AuthorizeStreamFunc) { p.authorizeRun = f }

// mayReadRun applies the run-ownership rule to a file read.
func (p *Plugin) mayReadRun(ctx context.Context, runID string) bool {
	id := core.IdentityFrom(ctx)
	if p.authorizeRun != nil {
		return p.authorizeRun(ctx, id, runID)
	}
	if id == nil {
		return true
	}
	st := p.rt.Storage()
	if !st.Has(core.StoreRuns) {
		return false
	}
	rec, err := st.GetRun(ctx, runID)
	return err == nil && rec.StartedBy != "" && rec.StartedBy == core.OwnerKey(id)
}

// readFile serves resources/read of a run's file, as GET
// /runs/{runId}/files/{key} serves it: the caller may read the run, the
// run announced the file (a file:generated crumb, or its agent:run:end),
// and the bytes come from the blob store. Anything else is not found.
func (p *Plugin) readFile(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	notFound := mcp.ResourceNotFoundError(req.Params.URI)
	runID, key, ok := parseFileURI(req.Params.URI)
	blobs, st := p.rt.Blobs(), p.rt.Storage()
	if !ok || !blobs.Configured() || !st.Has(core.StoreCrumbLog) || !p.mayReadRun(ctx, runID) {
		return nil, notFound
	}
	entries, err := st.GetCrumbs(ctx, runID, 0, 0)
	if err != nil {
		return nil, notFound
	}
	announced := false
	names := func(uri string) bool { k, ok := blobKey(blobs, uri, runID); return ok && k == key }
	for _, e := range entries {
		switch c := e.Crumb.(type) {
		case *core.FileGenerated:
			announced = announced || names(c.URI)
		case *core.AgentRunEnd:
			for _, f := range c.Files {
				announced = announced || names(f.URI)
			}
		}
	}
	if !announced {
		return nil, notFound
	}
	rc, info, err := blobs.Get(ctx, key)
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			return nil, notFound
		}
		return nil, err
	}
	defer rc.Close()
	if info.Size > MaxFileBytes {
		return nil, core.Errorf(core.CodeValidationError, "the file is %d bytes, more than resources/read carries (%d); fetch it from GET /runs/{runId}/files/{key}", info.Size, MaxFileBytes)
	}
	b, err := io.ReadAll(io.LimitReader(rc, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, core.Errorf(core.CodeValidationError, "the file is larger than resources/read carries (%d bytes)", MaxFileBytes)
	}
	mime := cmpOr(info.MimeType, "application/octet-stream")
	c := &mcp.ResourceContents{URI: req.Params.URI, MIMEType: mime}
	if strings.HasPrefix(mime, "text/") || mime == "application/json" {
		c.Text = string(b)
	} else {
		c.Blob = b
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}
