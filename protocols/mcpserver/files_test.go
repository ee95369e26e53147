package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpserver"
	"github.com/breadai/bread/server"
)

// A file a run generated is a resource: the call's result links it, and
// resources/read returns its bytes to the identity that started the run;
// another identity, a key the run never announced and a malformed URI are
// not found.
func TestGeneratedFilesAreResources(t *testing.T) {
	blobs, err := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nfake")
	model := modeltest.New(modeltest.File("image/png", png, "chart.png"), modeltest.Text("drawn"))
	st := newStack(t, setup{model: model, agents: []*core.Agent{echo()}, blobs: blobs, opts: mcpserver.Options{Agents: []string{"echo"}},
		auth: &server.Auth{Strategies: []core.BreadAuthStrategy{keyAuth{}}, Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }}})
	good := st.connect(t, "2025-11-25", nil, map[string][]string{"Authorization": {"Bearer good"}})
	other := st.connect(t, "2026-07-28", nil, map[string][]string{"Authorization": {"Bearer other"}})
	ctx := t.Context()

	res, err := good.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "draw"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && l.MIMEType == "image/png" {
			link = l
		}
	}
	if link == nil || !strings.HasPrefix(link.URI, "bread://runs/") {
		t.Fatalf("no file link in %s", schemaOf(t, res))
	}
	got, err := good.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
	if err != nil || len(got.Contents) != 1 || string(got.Contents[0].Blob) != string(png) || got.Contents[0].MIMEType != "image/png" {
		t.Fatalf("read %v %s", err, schemaOf(t, got))
	}
	lt, err := good.ListResourceTemplates(ctx, nil)
	if err != nil || !strings.Contains(schemaOf(t, lt), `"bread://runs/{runId}/files/{key}"`) {
		t.Errorf("templates %v %s", err, schemaOf(t, lt))
	}
	runPart := strings.SplitN(strings.TrimPrefix(link.URI, "bread://runs/"), "/", 2)[0]
	for name, uri := range map[string]string{
		"another identity":   link.URI,
		"an unannounced key": "bread://runs/" + runPart + "/files/nope",
		"a malformed uri":    "bread://runs/" + runPart + "/files/",
	} {
		cs := good
		if name == "another identity" {
			cs = other
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: read answered %v", name, err)
		}
	}
}
