package s3_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/s3"
)

func TestPresignedURLIsFetchableWithoutCredentials(t *testing.T) {
	s := newStore(t, testOptions(t))
	ref, err := s.Put(t.Context(), strings.NewReader("hello, bucket"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ref.URL, "X-Amz-Signature=") || !strings.HasPrefix(ref.URL, serverURL(t)) {
		t.Fatalf("URL %s is not a presigned URL of the server", ref.URL)
	}
	resp, err := http.Get(ref.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "hello, bucket" {
		t.Fatalf("GET %s: %d %q", ref.URL, resp.StatusCode, b)
	}
	if key, ok := s.KeyOf(ref.URL); !ok || key != ref.Key {
		t.Errorf("KeyOf(URL) = %q %v, want %q", key, ok, ref.Key)
	}
	if _, ok := s.KeyOf("https://elsewhere.example/bucket/../etc/passwd"); ok {
		t.Error("KeyOf accepted a URL of no blob")
	}
}

func TestDeleteSessionRemovesOnlyThatSession(t *testing.T) {
	s := newStore(t, testOptions(t))
	ctx := t.Context()
	var mine []core.BlobRef
	for _, session := range []string{"sess-1", "sess-1", "odd/session id ../"} {
		ref, err := s.PutForSession(ctx, session, strings.NewReader("data of "+session), "text/plain")
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, ref)
	}
	other, err := s.PutForSession(ctx, "sess-2", strings.NewReader("kept"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := s.Put(ctx, strings.NewReader("kept too"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mine[0].Key, "sessions/sess-1/") || strings.Contains(mine[2].Key, "..") || strings.Contains(mine[2].Key, " ") {
		t.Errorf("session keys %s and %s", mine[0].Key, mine[2].Key)
	}
	n, err := s.DeleteSession(ctx, "sess-1")
	if err != nil || n != 2 {
		t.Fatalf("DeleteSession = %d, %v; want 2", n, err)
	}
	if n, err := s.DeleteSession(ctx, "odd/session id ../"); err != nil || n != 1 {
		t.Fatalf("DeleteSession of an id that is not a key segment = %d, %v; want 1", n, err)
	}
	for _, ref := range mine {
		if _, _, err := s.Get(ctx, ref.Key); !errors.Is(err, &core.BreadError{Code: core.CodeNotFound}) {
			t.Errorf("Get(%s) after DeleteSession: %v, want NOT_FOUND", ref.Key, err)
		}
	}
	for _, ref := range []core.BlobRef{other, plain} {
		rc, _, err := s.Get(ctx, ref.Key)
		if err != nil {
			t.Fatalf("a blob of another session is gone: %v", err)
		}
		rc.Close()
	}
	if n, err := s.DeleteSession(ctx, "never-used"); err != nil || n != 0 {
		t.Errorf("DeleteSession of an empty session = %d, %v", n, err)
	}
}

// TestUploadsStream sends a blob of many parts and checks, for each part
// request the server receives, that the store had read no more of the
// source than the parts sent so far: the blob is never held whole.
func TestUploadsStream(t *testing.T) {
	const parts = 5
	var read atomic.Int64
	var mu sync.Mutex
	var seen []int64 // source bytes read when each UploadPart went out
	o := testOptions(t)
	o.PartSize = s3.MinPartSize
	o.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut && r.URL.Query().Has("partNumber") {
			mu.Lock()
			seen = append(seen, read.Load())
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	s := newStore(t, o)
	src := &countingReader{r: io.LimitReader(zeros{}, parts*s3.MinPartSize), n: &read}
	ref, err := s.Put(t.Context(), src, "application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != parts {
		t.Fatalf("%d part uploads, want %d", len(seen), parts)
	}
	for i, n := range seen {
		if n > int64(i+1)*s3.MinPartSize {
			t.Errorf("part %d went out after %d bytes were read: the store buffers ahead", i+1, n)
		}
	}
	_, info, err := s.Get(t.Context(), ref.Key)
	if err != nil || info.Size != parts*s3.MinPartSize {
		t.Fatalf("Get: %+v %v", info, err)
	}
}

// TestCredentialsFromTheSDKChain leaves credentials and region out of
// Options: the SDK's chain finds them in the environment.
func TestCredentialsFromTheSDKChain(t *testing.T) {
	o := testOptions(t)
	o.AccessKeyID, o.SecretAccessKey, o.Region = "", "", ""
	t.Setenv("AWS_ACCESS_KEY_ID", testAccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	s := newStore(t, o)
	ref, err := s.Put(t.Context(), strings.NewReader("x"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ref.URL, "X-Amz-Credential="+testAccessKey+"%2F") || !strings.Contains(ref.URL, "us-east-1") {
		t.Errorf("the URL is not signed with the environment's key and region: %s", ref.URL)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for name, o := range map[string]s3.Options{
		"no bucket":      {},
		"small part":     {Bucket: "b", PartSize: 1 << 20},
		"bad prefix":     {Bucket: "b", KeyPrefix: "../x/"},
		"empty segment":  {Bucket: "b", KeyPrefix: "a//b/"},
		"long presign":   {Bucket: "b", PresignExpiry: 8 * 24 * 3600 * 1e9},
		"negative bytes": {Bucket: "b", MaxBytes: -1},
	} {
		_, err := s3.New(context.Background(), o)
		if !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
			t.Errorf("%s: %v, want INVALID_CONFIG", name, err)
		}
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
