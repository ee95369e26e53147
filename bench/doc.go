// Package bench holds the HTTP benchmark harness of bread for Go: the real
// server (engine, server, store, replay model) against a plain net/http
// handler writing the same bytes, both in-process on loopback, driven by the
// same concurrent clients in the same run. It has no exported API; the
// benchmarks are in its tests and README.md explains how to read them.
package bench
