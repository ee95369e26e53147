package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/breadai/bread/core"
)

// put streams data to key: one PutObject when it fits in a part, else a
// multipart upload whose parts are read and sent one at a time. A failed or
// cancelled upload leaves nothing behind: the multipart upload is aborted.
func (s *Store) put(ctx context.Context, key string, data io.Reader, mimeType string) (core.BlobRef, error) {
	if err := ctx.Err(); err != nil {
		return core.BlobRef{}, err
	}
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	src := ctxReader{ctx: ctx, r: data}
	buf := make([]byte, s.partSize)
	n, err := readPart(src, buf)
	if err != nil {
		return core.BlobRef{}, s.readFailed(ctx, err)
	}
	if s.maxBytes > 0 && int64(n) > s.maxBytes {
		return core.BlobRef{}, tooLarge(s.maxBytes)
	}
	if n < len(buf) {
		// The whole blob fits in one part.
		_, err := s.client.PutObject(ctx, &awss3.PutObjectInput{
			Bucket: aws.String(s.bucket), Key: aws.String(key), ContentType: aws.String(mimeType),
			Body: bytes.NewReader(buf[:n]), ContentLength: aws.Int64(int64(n)),
		})
		if err != nil {
			return core.BlobRef{}, wrap(ctx, "put "+key, err)
		}
		return s.ref(ctx, key)
	}
	if err := s.multipart(ctx, key, mimeType, src, buf); err != nil {
		return core.BlobRef{}, err
	}
	return s.ref(ctx, key)
}

func (s *Store) multipart(ctx context.Context, key, mimeType string, src io.Reader, buf []byte) (err error) {
	up, err := s.client.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), ContentType: aws.String(mimeType),
	})
	if err != nil {
		return wrap(ctx, "start upload of "+key, err)
	}
	defer func() {
		if err != nil {
			// Abort even when ctx is cancelled, so no parts linger.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_, _ = s.client.AbortMultipartUpload(actx, &awss3.AbortMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(key), UploadId: up.UploadId})
		}
	}()
	var parts []types.CompletedPart
	total := int64(0)
	n := len(buf) // the first part is already in buf
	for number := int32(1); n > 0; number++ {
		total += int64(n)
		if s.maxBytes > 0 && total > s.maxBytes {
			return tooLarge(s.maxBytes)
		}
		out, err := s.client.UploadPart(ctx, &awss3.UploadPartInput{
			Bucket: aws.String(s.bucket), Key: aws.String(key), UploadId: up.UploadId, PartNumber: aws.Int32(number),
			Body: bytes.NewReader(buf[:n]), ContentLength: aws.Int64(int64(n)),
		})
		if err != nil {
			return wrap(ctx, "upload part of "+key, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(number)})
		if n < len(buf) {
			break
		}
		if n, err = readPart(src, buf); err != nil {
			return s.readFailed(ctx, err)
		}
	}
	_, err = s.client.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return wrap(ctx, "complete upload of "+key, err)
	}
	return nil
}

func (s *Store) ref(ctx context.Context, key string) (core.BlobRef, error) {
	u, err := s.URL(ctx, key)
	if err != nil {
		return core.BlobRef{}, err
	}
	return core.BlobRef{Key: key, URL: u}, nil
}

// readPart fills buf as far as the reader goes; io.EOF is not an error.
func readPart(r io.Reader, buf []byte) (int, error) {
	n, err := io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, nil
	}
	return n, err
}

func (s *Store) readFailed(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	return core.Errorf(core.CodeStoreError, "s3: reading the blob: %w", err)
}

func tooLarge(max int64) error {
	return core.Errorf(core.CodeBodyTooLarge, "blob exceeds %d bytes", max)
}

// ctxReader fails reads once ctx is done, so a cancelled upload stops
// reading its source.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
