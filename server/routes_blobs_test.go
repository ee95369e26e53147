package server_test

import (
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
	"github.com/breadai/bread/server"
)

func TestRunFilesWithoutABlobStore(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{})
	if r := do(t, ts.URL, "GET", server.RunFilePath("r", "k"), ""); r.status != 404 || r.errorCode(t) != core.CodeBlobStoreNotConfigured {
		t.Errorf("%d %s", r.status, r.body)
	}
}

// keyedBlobs names its blobs by URLs that do not end with the key, as a
// presigned S3 URL with a key prefix does, and maps them back (core.BlobKeyer).
type keyedBlobs struct{ core.BlobStore }

var _ core.BlobKeyer = keyedBlobs{}

func (keyedBlobs) url(key string) string {
	return "https://bucket.example/" + key + "/signed?X-Amz-Signature=x"
}

func (keyedBlobs) KeyOf(u string) (string, bool) {
	key, ok := strings.CutPrefix(u, "https://bucket.example/")
	key, _, _ = strings.Cut(key, "/")
	return key, ok
}

// A run's file is served when the run announced it in its crumb log, by
// any of the names the route accepts: the route's own path, a URL whose last
// segment is the key, or a store URL its core.BlobKeyer maps back.
func TestRunFilesAreThoseTheRunAnnounced(t *testing.T) {
	dir, err := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	blobs := keyedBlobs{dir}
	f := newFixture(t, fakeConfig{BlobStore: blobs})
	ctx := t.Context()
	put := func(body string) string {
		ref, err := blobs.Put(ctx, strings.NewReader(body), "text/plain")
		if err != nil {
			t.Fatal(err)
		}
		return ref.Key
	}
	byRoute, byURL, byKeyer, stray := put("route"), put("url"), put("keyer"), put("stray")
	announce := []core.CrumbLogEntry{
		{RunID: "r1", Seq: 1, Type: core.TypeFileGenerated, Crumb: &core.FileGenerated{CrumbBase: core.CrumbBase{RunID: "r1", Seq: 1}, URI: server.RunFilePath("r1", byRoute)}},
		{RunID: "r1", Seq: 2, Type: core.TypeFileGenerated, Crumb: &core.FileGenerated{CrumbBase: core.CrumbBase{RunID: "r1", Seq: 2}, URI: "file:///var/blobs/" + byURL}},
		{RunID: "r1", Seq: 3, Type: core.TypeAgentRunEnd, Crumb: &core.AgentRunEnd{CrumbBase: core.CrumbBase{RunID: "r1", Seq: 3}, Files: []core.FileOutput{{URI: blobs.url(byKeyer)}}}},
	}
	if err := f.store.AppendCrumbs(ctx, announce); err != nil {
		t.Fatal(err)
	}
	ts := f.serve(t, server.Options{})
	for key, want := range map[string]string{byRoute: "route", byURL: "url", byKeyer: "keyer"} {
		if r := do(t, ts.URL, "GET", server.RunFilePath("r1", key), ""); r.status != 200 || string(r.body) != want {
			t.Errorf("announced %q: %d %q", want, r.status, r.body)
		}
	}
	for name, p := range map[string]string{"a stray blob": server.RunFilePath("r1", stray), "another run": server.RunFilePath("r2", byRoute)} {
		if r := do(t, ts.URL, "GET", p, ""); r.status != 404 || r.errorCode(t) != core.CodeNotFound {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
}
