package server

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// ActionRunFileRead names GET /runs/{runId}/files/{key} (core's action).
const ActionRunFileRead = core.ActionRunFileRead

// RunFilePath is the path a run's blob is served at: the URI a client
// fetches for a file:generated crumb whose blob has key.
func RunFilePath(runID, key string) string { return httpstream.RunFilePath(runID, key) }

func (s *Server) blobRoutes(r core.Router) {
	r.Handle(ActionRunFileRead, http.MethodGet, "/runs/{runId}/files/{key:.+}", http.HandlerFunc(s.readRunFile))
}

// readRunFile serves GET /runs/{runId}/files/{key}: the bytes of a blob the
// run produced, read through the blob store, so a client fetches a
// generated file over HTTP instead of a path on the server's disk. The run
// must have announced the blob (a file:generated crumb or agent:run:end's
// files in the crumb log); any other key is NOT_FOUND, so access to a run
// grants its files and nothing else. After the action grant, the
// streams' AuthorizeStream (Options.Streams) applies as for the run's stream.
func (s *Server) readRunFile(w http.ResponseWriter, r *http.Request) {
	runID, key := r.PathValue("runId"), r.PathValue("key")
	if !s.streams.AuthorizeStream(r.Context(), core.IdentityFrom(r.Context()), runID) {
		forbidden(w)
		return
	}
	blobs := s.inst.Blobs()
	if !blobs.Configured() {
		writeError(w, http.StatusNotFound, core.CodeBlobStoreNotConfigured, "no blob store is configured")
		return
	}
	clog := s.inst.Storage()
	if !clog.Has(core.StoreCrumbLog) {
		writeError(w, http.StatusNotFound, core.CodeNotFound, "the store keeps no crumb log, so no run's files can be served")
		return
	}
	owned, err := runAnnounced(r, clog, blobs, runID, key)
	if err != nil {
		writeFailure(w, r, s.log, err)
		return
	}
	if !owned {
		writeError(w, http.StatusNotFound, core.CodeNotFound, "run "+quote(runID)+" has no file "+quote(key))
		return
	}
	rc, info, err := blobs.Get(r.Context(), key)
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			writeError(w, http.StatusNotFound, core.CodeNotFound, "the file of run "+quote(runID)+" is gone")
			return
		}
		writeFailure(w, r, s.log, err)
		return
	}
	defer rc.Close()
	h := w.Header()
	mime := info.MimeType
	if mime == "" {
		mime = "application/octet-stream"
	}
	h.Set("Content-Type", mime)
	h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
	// A generated file is data, never a page of this origin.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.Copy(w, rc)
	}
}

// runAnnounced reports whether the run's logged crumbs announce a file
// with key: a file:generated crumb or a file of agent:run:end.
func runAnnounced(r *http.Request, clog core.CrumbLog, blobs *core.Blobs, runID, key string) (bool, error) {
	entries, err := clog.GetCrumbs(r.Context(), runID, 0, 0)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		switch c := e.Crumb.(type) {
		case *core.FileGenerated:
			if names(blobs, c.URI, runID, key) {
				return true, nil
			}
		case *core.AgentRunEnd:
			for _, f := range c.Files {
				if names(blobs, f.URI, runID, key) {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

// names reports whether uri, as a run announced it, is the blob key: this
// route's own path for it, the store's URL for it (KeyOf, for a store
// whose URLs do not end with the key: stores/s3's presigned ones), or a
// URL whose last path segment is the key (core/blobfs's file URLs).
func names(blobs *core.Blobs, uri, runID, key string) bool {
	if uri == RunFilePath(runID, key) {
		return true
	}
	if got, ok := blobs.KeyOf(uri); ok {
		return got == key
	}
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" {
		return false
	}
	return path.Base(u.Path) == key
}
