// Package s3 is a core.BlobStore on Amazon S3 and S3-compatible servers
// (MinIO, Cloudflare R2, Ceph, ...), for programs that keep the files their
// agents produce in object storage. A program that keeps them on local disk
// uses core/blobfs instead.
//
// Uploads stream: a blob is read part by part (Options.PartSize, 8 MiB by
// default) and sent as one PutObject when it fits in a part, or as a
// multipart upload otherwise, so memory holds one part whatever the blob's
// size. Keys are generated (never chosen by callers); Get and Delete accept
// exactly the keys Put issues. Put returns a presigned GET URL a client can
// fetch without credentials. Blobs stored for a session (PutForSession) share
// a key prefix that DeleteSession removes in one sweep. Store passes the
// core/blobtest conformance suite.
package s3
