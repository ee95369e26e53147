package cli_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/s3"
)

// s3Server returns the S3-compatible test server's URL and credentials, or
// skips (fails under BREAD_TEST_REQUIRE=1).
func s3Server(t *testing.T) (url, key, secret string) {
	t.Helper()
	url = os.Getenv("BREAD_TEST_S3_URL")
	if url == "" {
		msg := "BREAD_TEST_S3_URL is not set: point it at an S3-compatible server (.ci/run starts one)"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	key, secret = os.Getenv("BREAD_TEST_S3_ACCESS_KEY"), os.Getenv("BREAD_TEST_S3_SECRET_KEY")
	if key == "" {
		key, secret = "bread", "bread-secret"
	}
	return url, key, secret
}

// TestGeneratedFilesInS3AreServedWithAuthAndGoWithTheSession runs an agent
// whose model generates a file on a `bread start` with auth on and blobs in
// S3: the file:generated URI is the server's route, which serves the bytes
// to an authorized caller only; deleting the session deletes the object.
func TestGeneratedFilesInS3AreServedWithAuthAndGoWithTheSession(t *testing.T) {
	endpoint, key, secret := s3Server(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "cli-" + hex.EncodeToString(b) + "/"
	png := []byte("\x89PNG\r\n\x1a\nbread pixels")
	fileLine, _ := json.Marshal(map[string]any{"call": 0, "type": "file", "file": map[string]any{"mediaType": "image/png", "data": png, "name": "loaf.png"}})
	dir := project(t, map[string]string{
		"bread.yaml": "entrypoints: [painter]\nstore: {type: sqlite, path: ./bread.db}\n" +
			"blobs: {type: s3, bucket: bread-test, endpoint: " + endpoint + ", pathStyle: true, region: us-east-1, " +
			"accessKeyId: " + key + ", secretAccessKey: " + secret + ", keyPrefix: " + prefix + ", createBucket: true}\n" +
			"server:\n  auth: {type: apikey, scheme: Bearer, keys: [k-123]}\n",
		"agents/painter/agent.yaml": "model: {provider: replay, model: t/p.jsonl}\n",
		"t/p.jsonl":                 string(fileLine) + "\n" + `{"call":0,"type":"finish","finishReason":"stop"}` + "\n",
	})
	srv := startReplica(t, dir, nil)
	call := func(method, path string, auth bool) (int, []byte) {
		req, _ := http.NewRequest(method, srv.base+path, nil)
		if method == http.MethodPost {
			req.Body = io.NopCloser(strings.NewReader(`{"input":"paint a loaf"}`))
			req.Header.Set("Content-Type", "application/json")
		}
		if auth {
			req.Header.Set("Authorization", "Bearer k-123")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}

	status, body := call(http.MethodPost, "/agents/painter/run", true)
	if status != 200 {
		t.Fatalf("run: %d %s", status, body)
	}
	var uri, session string
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		var f struct {
			Crumb struct {
				Type      string `json:"type"`
				URI       string `json:"uri"`
				SessionID string `json:"sessionId"`
			} `json:"crumb"`
		}
		if json.Unmarshal(sc.Bytes(), &f) == nil && f.Crumb.Type == core.TypeFileGenerated {
			uri, session = f.Crumb.URI, f.Crumb.SessionID
		}
	}
	if !strings.HasPrefix(uri, "/runs/") || !strings.Contains(uri, "/files/"+prefix+"sessions/"+session+"/") {
		t.Fatalf("file:generated URI %q is not the server's route to a session-filed blob (stream: %s)", uri, body)
	}
	if status, got := call(http.MethodGet, uri, true); status != 200 || string(got) != string(png) {
		t.Fatalf("GET %s with the key: %d %q", uri, status, got)
	}
	if status, _ := call(http.MethodGet, uri, false); status != http.StatusUnauthorized && status != http.StatusForbidden {
		t.Errorf("GET %s without the key: %d, want 401 or 403", uri, status)
	}

	// Deleting the session deletes its blobs from the bucket.
	if status, body := call(http.MethodDelete, "/sessions/"+session, true); status >= 300 {
		t.Fatalf("DELETE session: %d %s", status, body)
	}
	if status, _ := call(http.MethodGet, uri, true); status != 404 {
		t.Errorf("GET %s after the session's deletion: %d, want 404", uri, status)
	}
	store, err := s3.New(context.Background(), s3.Options{Bucket: "bread-test", Endpoint: endpoint, PathStyle: true, Region: "us-east-1",
		AccessKeyID: key, SecretAccessKey: secret, KeyPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	objKey := uri[strings.Index(uri, "/files/")+len("/files/"):]
	if _, _, err := store.Get(context.Background(), objKey); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("the object %s is still in the bucket after its session was deleted: %v", objKey, err)
	}
}
