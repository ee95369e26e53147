// Package blobtest is the conformance suite for core.BlobStore, for anyone
// writing a blob store: Run checks a store against the port's contract
// (round trips, NOT_FOUND, keys that cannot escape the store, cancellation,
// streaming, concurrency and the optional core.BlobDeleter). A store runs it
// from its own tests and declares its optional capabilities in Features, as
// with core/storetest.
package blobtest
