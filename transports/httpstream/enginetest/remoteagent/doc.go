// Package remoteagent holds the tests of httpstream/remoteagent that need
// a real engine behind the remote agent's server: reconnects in both
// formats. It exports nothing.
package remoteagent
