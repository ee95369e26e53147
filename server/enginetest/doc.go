// Package enginetest holds the server's tests that need the real engine:
// runs streamed, tailed, resumed, cancelled and run in the background
// through server.New(*engine.Instance). It is a module of its own so that
// the server module, tests included, never depends on the engine (the
// server's unit tests run on a fake server.Engine). It exports nothing.
package enginetest
