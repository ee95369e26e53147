//go:build !unix

package server

// openFileLimit is unknown on this platform: the connection cap's default
// stands alone.
func openFileLimit() int { return 0 }
