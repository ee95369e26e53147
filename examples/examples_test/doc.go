// Package examplestest holds the tests of the runnable projects in
// examples/: each one is copied to a temporary directory and driven through
// the bread CLI, in process through cli.Main, and through the bread binary
// where a test needs a real server.
package examplestest
