package riverjobs

import "github.com/riverqueue/river/riverdriver"

// pollOnlyDriver is River's PostgreSQL driver (pgx or database/sql),
// saying it can neither LISTEN nor NOTIFY. The queue runs River poll-only,
// so no replica listens for the NOTIFY River sends in each insert
// transaction: it is a round trip for nothing, and PostgreSQL serialises
// the commits of notifying transactions on one lock, held across the WAL
// flush. River then runs as on SQLite, which has neither: a queue's own
// inserts wake its producer in process (River does that only for a driver
// without a listener, hence SupportsListener), and other replicas find the
// jobs at their next poll (Options.PollInterval).
type pollOnlyDriver[TTx any] struct {
	riverdriver.Driver[TTx]
}

// SupportsListener is false: River wakes the queue's producer on its own
// inserts rather than waiting for a notification.
func (pollOnlyDriver[TTx]) SupportsListener() bool { return false }

// SupportsListenNotify is false: River sends no NOTIFY.
func (pollOnlyDriver[TTx]) SupportsListenNotify() bool { return false }
