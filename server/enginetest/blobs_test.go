package enginetest_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// generated runs writer, whose model makes a file, and returns the run id
// and the blob key of the file.
func generated(t *testing.T, f *fixture) (runID, key string) {
	t.Helper()
	var uri string
	for c, err := range f.inst.Run(t.Context(), "writer", "draw", core.RunOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if fg, ok := c.(*core.FileGenerated); ok {
			runID, uri = fg.RunID, fg.URI
		}
	}
	u, err := url.Parse(uri)
	if err != nil || runID == "" {
		t.Fatalf("no file:generated (%q): %v", uri, err)
	}
	return runID, path.Base(u.Path)
}

func TestRunFilesAreServedToWhoMayReadTheRun(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nnot really a png")
	blobs, err := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, engine.Config{BlobStore: blobs},
		modeltest.File("image/png", png, "pic.png"), modeltest.Text("another run"))
	runID, key := generated(t, f)
	other, err := f.inst.RunSync(t.Context(), "writer", "talk", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A blob no run announced, stored behind the runs' backs.
	stray, err := blobs.Put(t.Context(), strings.NewReader("secret"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	ts := f.serve(t, server.Options{Auth: &server.Auth{
		Strategies: []core.BreadAuthStrategy{headerAuth{}},
		Authorize: func(_ context.Context, id *core.AuthIdentity, action string, args map[string]string) bool {
			calls = append(calls, action+" "+args["runId"]+" "+args["key"])
			return id != nil && id.Subject == "alice" && action == server.ActionRunFileRead
		},
	}})
	file := server.RunFilePath(runID, key)

	r := do(t, ts.URL, "GET", file, "", "X-Identity", "alice")
	if r.status != 200 || string(r.body) != string(png) {
		t.Fatalf("alice: %d %q", r.status, r.body)
	}
	for h, want := range map[string]string{"Content-Type": "image/png", "X-Content-Type-Options": "nosniff", "Content-Length": strconv.Itoa(len(png))} {
		if got := r.header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if len(calls) == 0 || calls[len(calls)-1] != server.ActionRunFileRead+" "+runID+" "+key {
		t.Errorf("authorize saw %v", calls)
	}
	if r := do(t, ts.URL, "GET", file, "", "X-Identity", "bob"); r.status != 403 {
		t.Errorf("bob: %d, want 403", r.status)
	}
	if r := do(t, ts.URL, "GET", file, ""); r.status != 401 && r.status != 403 {
		t.Errorf("anonymous: %d, want 401 or 403", r.status)
	}
	for name, p := range map[string]string{
		"another run's id": server.RunFilePath(other.RunID, key),
		"a stray blob":     server.RunFilePath(runID, stray.Key),
		"an unknown key":   server.RunFilePath(runID, "00000000-0000-0000-0000-000000000000"),
		"a traversal":      "/runs/" + runID + "/files/..%2F..%2Fetc%2Fpasswd",
		"an unknown run":   server.RunFilePath("nope", key),
	} {
		if r := do(t, ts.URL, "GET", p, "", "X-Identity", "alice"); r.status != 404 || r.errorCode(t) != core.CodeNotFound {
			t.Errorf("%s: %d %s, want 404 NOT_FOUND", name, r.status, r.body)
		}
	}
}

func TestRunFilesFollowTheStreamAuthorization(t *testing.T) {
	blobs, _ := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	f := newFixture(t, engine.Config{BlobStore: blobs}, modeltest.File("text/plain", []byte("hi"), "a.txt"))
	runID, key := generated(t, f)
	ts := f.serve(t, server.Options{
		Auth:    &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }},
		Streams: allowStreams(func(id *core.AuthIdentity, _ string) bool { return id != nil && id.Subject == "owner" }),
	})
	if r := do(t, ts.URL, "GET", server.RunFilePath(runID, key), "", "X-Identity", "mallory"); r.status != 403 {
		t.Errorf("a caller who may not watch the run: %d, want 403", r.status)
	}
	if r := do(t, ts.URL, "GET", server.RunFilePath(runID, key), "", "X-Identity", "owner"); r.status != 200 || string(r.body) != "hi" {
		t.Errorf("the run's owner: %d %q", r.status, r.body)
	}
}

// Over HTTP a generated file is named by its route, never by the blob
// store's path on the server's disk: a Go program serving an engine whose
// blob store is core/blobfs streams /runs/{id}/files/{key} in file:generated
// and agent:run:end, and that URI fetches the bytes.
func TestGeneratedFilesAreNamedByTheirRouteOverHTTP(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nnot really a png")
	blobs, err := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, engine.Config{BlobStore: blobs}, modeltest.File("image/png", png, "pic.png"), modeltest.File("image/png", png, "pic.png"))
	ts := f.serve(t, server.Options{})
	for _, accept := range []string{"application/x-ndjson", "text/event-stream"} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/agents/writer/run", strings.NewReader(`{"input":"draw"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(body), "file://") {
			t.Fatalf("%s: the stream names a file by a server path:\n%s", accept, body)
		}
		i := strings.Index(string(body), `"/runs/`)
		if i < 0 {
			t.Fatalf("%s: no file route in the stream:\n%s", accept, body)
		}
		uri := string(body[i+1:])
		uri = uri[:strings.IndexByte(uri, '"')]
		if !strings.Contains(string(body), `"uri":"`+uri+`"`) {
			t.Fatalf("%s: the file:generated URI is not the route %s:\n%s", accept, uri, body)
		}
		got, err := http.Get(ts.URL + uri)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(got.Body)
		got.Body.Close()
		if got.StatusCode != http.StatusOK || string(data) != string(png) {
			t.Fatalf("%s: GET %s: %d %q", accept, uri, got.StatusCode, data)
		}
	}
}
