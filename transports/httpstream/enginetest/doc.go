// Package enginetest holds httpstream's tests that need the real engine:
// runs streamed in both formats, tailed, resumed, cancelled and run in the
// background through an httpstream.Ingress around an *engine.Instance. It
// is a module of its own so that the httpstream module, tests included,
// never depends on the engine, and neither does the server module that
// requires it. It exports nothing.
package enginetest
