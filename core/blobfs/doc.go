// Package blobfs is a core.BlobStore on the local file system: the embedded
// default for files a model or tool produces when no remote blob store (S3,
// GCS, ...) is configured.
//
// Each blob is two files under Dir: <key> with the bytes and <key>.json with
// its metadata. Keys are random UUIDs, so a caller never chooses a path.
// URLs are file:// URLs of the data file. Store also implements the optional
// core.BlobDeleter; it passes the core/blobtest conformance suite.
package blobfs
