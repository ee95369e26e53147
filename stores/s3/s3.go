package s3

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"

	"github.com/breadai/bread/core"
)

// Defaults of Options.
const (
	DefaultPartSize      = 8 << 20
	MinPartSize          = 5 << 20 // S3's smallest part but the last
	DefaultPresignExpiry = time.Hour
)

// Options configure a Store. Only Bucket is required.
type Options struct {
	// Bucket holds the blobs.
	Bucket string
	// Region of the bucket. Empty takes the SDK's (AWS_REGION, the shared
	// config file); with an Endpoint and no region anywhere, us-east-1.
	Region string
	// Endpoint is the base URL of an S3-compatible server, for example
	// http://127.0.0.1:9000. Empty talks to AWS.
	Endpoint string
	// PathStyle addresses objects as endpoint/bucket/key instead of
	// bucket.endpoint/key; most S3-compatible servers want it.
	PathStyle bool
	// AccessKeyID and SecretAccessKey (and SessionToken) are static
	// credentials. Empty uses the SDK's default chain: environment, shared
	// files, SSO, web identity, ECS and EC2 roles.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// Profile selects a shared-config profile for the default chain.
	Profile string
	// KeyPrefix is put before every key, for example "bread/". It is part
	// of the keys Put returns.
	KeyPrefix string
	// PartSize is how much of a blob is read and sent at a time (default
	// 8 MiB, at least 5 MiB). It bounds the memory one upload holds.
	PartSize int64
	// MaxBytes caps one blob; 0 means no cap. A larger blob is
	// BODY_TOO_LARGE and nothing of it is kept.
	MaxBytes int64
	// PresignExpiry is how long the URL Put returns stays valid (default
	// one hour, at most seven days).
	PresignExpiry time.Duration
	// CreateBucket creates the bucket at New when it does not exist.
	CreateBucket bool
	// HTTPClient sends the requests; nil is the SDK's.
	HTTPClient *http.Client
}

// Store is a core.BlobStore on an S3 bucket. It is safe for concurrent use.
type Store struct {
	client   *awss3.Client
	presign  *awss3.PresignClient
	bucket   string
	prefix   string
	partSize int64
	maxBytes int64
	expiry   time.Duration
}

var (
	_ core.BlobStore   = (*Store)(nil)
	_ core.BlobDeleter = (*Store)(nil)
	_ core.BlobKeyer   = (*Store)(nil)
)

// New builds a Store and checks the bucket is reachable (creating it with
// Options.CreateBucket). Credentials come from Options or the SDK's chain.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Bucket == "" {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "s3: Bucket is required"}
	}
	if opts.PartSize == 0 {
		opts.PartSize = DefaultPartSize
	}
	if opts.PartSize < MinPartSize {
		return nil, core.Errorf(core.CodeInvalidConfig, "s3: PartSize %d is below S3's minimum part of %d bytes", opts.PartSize, MinPartSize)
	}
	if opts.MaxBytes < 0 {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "s3: MaxBytes must not be negative"}
	}
	if opts.PresignExpiry == 0 {
		opts.PresignExpiry = DefaultPresignExpiry
	}
	if opts.PresignExpiry < 0 || opts.PresignExpiry > 7*24*time.Hour {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "s3: PresignExpiry must be between 1s and 7 days"}
	}
	if !validPrefix(opts.KeyPrefix) {
		return nil, core.Errorf(core.CodeInvalidConfig, "s3: KeyPrefix %q may hold only letters, digits and - _ . / and no empty, . or .. segment", opts.KeyPrefix)
	}
	var loads []func(*config.LoadOptions) error
	if opts.Region != "" {
		loads = append(loads, config.WithRegion(opts.Region))
	}
	if opts.Profile != "" {
		loads = append(loads, config.WithSharedConfigProfile(opts.Profile))
	}
	if opts.AccessKeyID != "" || opts.SecretAccessKey != "" {
		loads = append(loads, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(opts.AccessKeyID, opts.SecretAccessKey, opts.SessionToken)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "s3: loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" && opts.Endpoint != "" {
		cfg.Region = "us-east-1"
	}
	client := awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.UsePathStyle = opts.PathStyle
		if opts.HTTPClient != nil {
			o.HTTPClient = opts.HTTPClient
		}
		// Checksums only when an operation requires them: S3-compatible
		// servers differ in the trailing checksums they accept.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	s := &Store{
		client: client, presign: awss3.NewPresignClient(client), bucket: opts.Bucket, prefix: opts.KeyPrefix,
		partSize: opts.PartSize, maxBytes: opts.MaxBytes, expiry: opts.PresignExpiry,
	}
	if err := s.checkBucket(ctx, opts.CreateBucket); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) checkBucket(ctx context.Context, create bool) error {
	_, err := s.client.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(s.bucket)})
	if err == nil {
		return nil
	}
	if !create || !isMissing(err) {
		return core.Errorf(core.CodeInvalidConfig, "s3: bucket %s is not reachable: %w", s.bucket, err)
	}
	_, err = s.client.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(s.bucket)})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return core.Errorf(core.CodeInvalidConfig, "s3: creating bucket %s: %w", s.bucket, err)
	}
	return nil
}

// Client is the SDK client the store uses, for what the port does not
// cover (lifecycle rules, bucket policies).
func (s *Store) Client() *awss3.Client { return s.client }

// Put stores data under a new key and returns the key and a presigned GET
// URL. data is read as a stream; see Options.PartSize.
func (s *Store) Put(ctx context.Context, data io.Reader, mimeType string) (core.BlobRef, error) {
	return s.put(ctx, s.prefix+uuid.NewString(), data, mimeType)
}

// PutForSession stores data like Put, under the session's prefix, so that
// DeleteSession removes it with the session's other blobs.
func (s *Store) PutForSession(ctx context.Context, sessionID string, data io.Reader, mimeType string) (core.BlobRef, error) {
	if sessionID == "" {
		return s.Put(ctx, data, mimeType)
	}
	return s.put(ctx, s.sessionPrefix(sessionID)+uuid.NewString(), data, mimeType)
}

// sessionPrefix is where a session's blobs live: its id when that is a safe
// key segment, else a digest of it.
func (s *Store) sessionPrefix(sessionID string) string {
	seg := sessionID
	if !safeSegment.MatchString(seg) {
		sum := sha256.Sum256([]byte(sessionID))
		seg = "h-" + hex.EncodeToString(sum[:20])
	}
	return s.prefix + sessionDir + seg + "/"
}

const sessionDir = "sessions/"

var (
	safeSegment = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)
	canonicalID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	prefixChars = regexp.MustCompile(`^[A-Za-z0-9_.\-/]*$`)
)

func validPrefix(p string) bool {
	if p == "" {
		return true
	}
	if !prefixChars.MatchString(p) {
		return false
	}
	segs := strings.Split(strings.TrimSuffix(p, "/"), "/")
	for _, seg := range segs {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// validKey accepts exactly the keys Put and PutForSession issue: the
// prefix, an optional sessions/<segment>/, and a canonical UUID. Anything
// else names no blob of this store, whatever the server would make of it.
func (s *Store) validKey(key string) bool {
	rest, ok := strings.CutPrefix(key, s.prefix)
	if !ok {
		return false
	}
	if sess, ok := strings.CutPrefix(rest, sessionDir); ok {
		seg, id, ok := strings.Cut(sess, "/")
		if !ok || !safeSegment.MatchString(seg) {
			return false
		}
		rest = id
	}
	return canonicalID.MatchString(rest)
}

// Get opens a blob; the reader streams the object's body. A key Put did not
// issue is NOT_FOUND.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, core.BlobInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, core.BlobInfo{}, err
	}
	if !s.validKey(key) {
		return nil, core.BlobInfo{}, notFound(key)
	}
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		if isMissing(err) {
			return nil, core.BlobInfo{}, notFound(key)
		}
		return nil, core.BlobInfo{}, wrap(ctx, "get "+key, err)
	}
	info := core.BlobInfo{MimeType: aws.ToString(out.ContentType), Size: aws.ToInt64(out.ContentLength)}
	return &body{rc: out.Body}, info, nil
}

// URL presigns a GET of key valid for Options.PresignExpiry, for clients
// that fetch the object directly.
func (s *Store) URL(ctx context.Context, key string) (string, error) {
	if !s.validKey(key) {
		return "", notFound(key)
	}
	req, err := s.presign.PresignGetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}, awss3.WithPresignExpires(s.expiry))
	if err != nil {
		return "", wrap(ctx, "presign "+key, err)
	}
	return req.URL, nil
}

// KeyOf returns the key a URL of this store names (as URL returns them),
// for servers that map a blob's URL back to the blob.
func (s *Store) KeyOf(rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false
	}
	p := strings.TrimPrefix(u.Path, "/")
	// Path-style URLs start with the bucket; virtual-hosted ones do not.
	if b, rest, ok := strings.Cut(p, "/"); ok && b == s.bucket && s.validKey(rest) {
		return rest, true
	}
	if s.validKey(p) {
		return p, true
	}
	return "", false
}

// Delete removes a blob. A key that names no blob, malformed ones included,
// is not an error (core.BlobDeleter).
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.validKey(key) {
		return nil
	}
	_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil && !isMissing(err) {
		return wrap(ctx, "delete "+key, err)
	}
	return nil
}

// DeleteSession removes every blob PutForSession stored for sessionID and
// returns how many it removed. A session with no blobs is not an error.
func (s *Store) DeleteSession(ctx context.Context, sessionID string) (int, error) {
	if sessionID == "" {
		return 0, nil
	}
	return s.deletePrefix(ctx, s.sessionPrefix(sessionID))
}

func (s *Store) deletePrefix(ctx context.Context, prefix string) (int, error) {
	n := 0
	pages := awss3.NewListObjectsV2Paginator(s.client, &awss3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, wrap(ctx, "list "+prefix, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, 0, len(page.Contents))
		for _, o := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: o.Key})
		}
		out, err := s.client.DeleteObjects(ctx, &awss3.DeleteObjectsInput{
			Bucket: aws.String(s.bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return n, wrap(ctx, "delete under "+prefix, err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return n + len(ids) - len(out.Errors), core.Errorf(core.CodeStoreError, "s3: deleting %s: %s %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
		}
		n += len(ids)
	}
	return n, nil
}

// isMissing reports a missing object or bucket.
func isMissing(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var nb *types.NoSuchBucket
	if errors.As(err, &nsk) || errors.As(err, &nf) || errors.As(err, &nb) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchKey", "NotFound", "NoSuchBucket":
			return true
		}
	}
	return false
}

// wrap keeps a cancelled context recognisable (errors.Is context.Canceled)
// and makes anything else a STORE_ERROR.
func wrap(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("s3: %s: %w", what, ctxErr)
	}
	return core.Errorf(core.CodeStoreError, "s3: %s: %w", what, err)
}

func notFound(key string) error {
	if len(key) > 80 {
		key = key[:60] + "…"
	}
	return &core.BreadError{Code: core.CodeNotFound, Message: fmt.Sprintf("blob %q not found", key)}
}

// body is an object's stream. Close may be called more than once.
type body struct {
	rc     io.ReadCloser
	closed bool
}

func (b *body) Read(p []byte) (int, error) { return b.rc.Read(p) }

func (b *body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	return b.rc.Close()
}
