package storetest

import (
	"time"

	"github.com/breadai/bread/core"
)

// Stores stamp records from the wall clock in Unix milliseconds. Cases that
// need time to pass wait for the clock itself instead of sleeping a guessed
// amount, so they are as short as possible and never early.

// waitPast blocks until core.NowMillis() is strictly greater than ms.
func waitPast(ms int64) {
	for {
		now := core.NowMillis()
		if now > ms {
			return
		}
		time.Sleep(time.Duration(ms-now+1) * time.Millisecond)
	}
}

// nextMillisecond blocks until the clock has left the current millisecond,
// so two writes either side of it carry distinct timestamps.
func nextMillisecond() { waitPast(core.NowMillis()) }

// cleanupWindow is the OlderThan the cleanup cases use. It is long enough
// that a session created just before CleanupSessions is reliably inside it,
// and short enough to keep the cases fast.
const cleanupWindow = 60 * time.Millisecond

// ageOut blocks until a record updated at updatedAt is older than
// cleanupWindow by a clear margin, whichever way a store rounds.
func ageOut(updatedAt int64) { waitPast(updatedAt + cleanupWindow.Milliseconds() + 2) }

// stillFresh reports whether a record updated at updatedAt is still inside
// cleanupWindow now. When the machine stalled long enough for it not to be,
// a cleanup case can no longer tell whether the store should have spared it.
func stillFresh(updatedAt int64) bool {
	return core.NowMillis()-updatedAt < cleanupWindow.Milliseconds()
}
