package s3_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobtest"
	"github.com/breadai/bread/stores/s3"
)

// testBucket is created on the test server when missing.
const testBucket = "bread-test"

// The test server's credentials (.ci/run starts it with them); a server
// that checks no signature accepts them too.
var (
	testAccessKey = envOr("BREAD_TEST_S3_ACCESS_KEY", "bread")
	testSecretKey = envOr("BREAD_TEST_S3_SECRET_KEY", "bread-secret")
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// serverURL returns the S3-compatible server of the machine, or skips
// (fails under BREAD_TEST_REQUIRE=1).
func serverURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("BREAD_TEST_S3_URL")
	if u == "" {
		msg := "BREAD_TEST_S3_URL is not set: point it at an S3-compatible server (.ci/run starts one on http://127.0.0.1:9324)"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return u
}

// testOptions address the test server with static credentials under a
// fresh prefix, so each store starts empty.
func testOptions(t testing.TB) s3.Options {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return s3.Options{
		Bucket: testBucket, Endpoint: serverURL(t), PathStyle: true, Region: "us-east-1",
		AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey,
		KeyPrefix: "t-" + hex.EncodeToString(b) + "/", CreateBucket: true,
	}
}

func newStore(t testing.TB, opts s3.Options) *s3.Store {
	t.Helper()
	s, err := s3.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, blobtest.Features{Delete: true}, func(t *testing.T) core.BlobStore {
		return newStore(t, testOptions(t))
	})
}

func TestConformanceWithMaxBytes(t *testing.T) {
	const max = 6 << 20 // over one part, so the cap is checked across a multipart upload
	blobtest.Run(t, blobtest.Features{Delete: true, MaxBytes: max}, func(t *testing.T) core.BlobStore {
		o := testOptions(t)
		o.MaxBytes = max
		o.PartSize = s3.MinPartSize
		return newStore(t, o)
	})
}
