package cli

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// runBlobs is the blob store the CLI hands the engine. Inside a run it
// files blobs under the run's session when the store can
// (core.SessionBlobStore: stores/s3), and, when
// serving, names each blob by the server's route for it
// (/runs/{runId}/files/{key}) instead of a path on the server's disk or a
// bucket URL, so a client fetches generated files from the server with its
// own credentials. As a plugin it deletes a session's blobs when the
// session is deleted through the server.
type runBlobs struct {
	inner *core.Blobs
	// serverURLs: name blobs by the server's route (bread.yaml blobs.urls
	// "server", the default); false keeps the store's URLs ("store").
	serverURLs bool
	log        func(msg string, args ...any)
}

var (
	_ core.BlobStore          = (*runBlobs)(nil)
	_ core.BlobDeleter        = (*runBlobs)(nil)
	_ core.BlobKeyer          = (*runBlobs)(nil)
	_ core.MiddlewareProvider = (*runBlobs)(nil)
)

// serveBlobs wraps the project's blob store for the engine and returns the
// plugins with the wrapper added. A terminal command has no server: its
// blobs keep the store's URLs.
func (a *app) serveBlobs(bs core.BlobStore, plugins []core.BreadPlugin, m mode) (core.BlobStore, []core.BreadPlugin) {
	rb, ok := bs.(*runBlobs)
	if !ok {
		return bs, plugins
	}
	if m == modeTerminal {
		rb.serverURLs = false
	}
	rb.log = a.log.Warn
	return rb, append(plugins, rb)
}

func (b *runBlobs) Name() string { return "blobs" }

func (b *runBlobs) Put(ctx context.Context, data io.Reader, mimeType string) (core.BlobRef, error) {
	run, inRun := engine.RunFromContext(ctx)
	var ref core.BlobRef
	var err error
	if inRun {
		ref, err = b.inner.PutForSession(ctx, run.SessionID, data, mimeType) // Put when the store does not file by session
	} else {
		ref, err = b.inner.Put(ctx, data, mimeType)
	}
	if err == nil && inRun && b.serverURLs {
		ref.URL = server.RunFilePath(run.RunID, ref.Key)
	}
	return ref, err
}

func (b *runBlobs) Get(ctx context.Context, key string) (io.ReadCloser, core.BlobInfo, error) {
	return b.inner.Get(ctx, key)
}

// Delete removes a blob when the store can; a store without deletion
// keeps it (nil error, as for a missing key).
func (b *runBlobs) Delete(ctx context.Context, key string) error {
	if b.inner.Has(core.BlobDelete) {
		return b.inner.Delete(ctx, key)
	}
	return ctx.Err()
}

// KeyOf lets the server map the store's own URLs back to keys (none when
// its URLs end with the key).
func (b *runBlobs) KeyOf(url string) (string, bool) { return b.inner.KeyOf(url) }

// Middleware deletes a session's blobs after the server deleted the session
// (DELETE /sessions/{id} answered 2xx), when the store files blobs by
// session. Sessions removed otherwise (POST /sessions/cleanup, `bread
// sessions`) keep their blobs; a bucket lifecycle rule on the sessions/
// prefix covers those.
func (b *runBlobs) Middleware(next http.Handler) http.Handler {
	if !b.inner.Has(core.BlobSessions) {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, isDelete := sessionDelete(r)
		if !isDelete {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status >= 200 && sw.status < 300 {
			if _, err := b.inner.DeleteSession(context.WithoutCancel(r.Context()), id); err != nil && b.log != nil {
				b.log("bread: deleting the blobs of a deleted session failed", "sessionId", id, "error", err)
			}
		}
	})
}

// sessionDelete recognises DELETE /sessions/{id}.
func sessionDelete(r *http.Request) (string, bool) {
	if r.Method != http.MethodDelete {
		return "", false
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/sessions/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	return id, true
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
