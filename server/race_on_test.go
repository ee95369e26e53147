//go:build race

package server_test

// raceEnabled: the race detector multiplies the memory a goroutine costs,
// so memory bounds are only logged under it.
const raceEnabled = true
