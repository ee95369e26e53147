package riverjobs

import "github.com/riverqueue/river/riverdriver/riverdatabasesql"

// pollOnlyDriver is River's database/sql driver for PostgreSQL, saying it
// cannot NOTIFY. The queue runs River poll-only (database/sql has no
// LISTEN), so no replica listens for the NOTIFY River sends in each insert
// transaction: it is a round trip for nothing, and PostgreSQL serialises
// the commits of notifying transactions on one lock, held across the WAL
// flush. River then runs as on SQLite, which has no NOTIFY either: a
// queue's own inserts wake its producer in process, other replicas find
// the jobs at their next poll (Options.PollInterval), as they did before.
type pollOnlyDriver struct {
	*riverdatabasesql.Driver
}

// SupportsListenNotify is false: River sends no NOTIFY.
func (pollOnlyDriver) SupportsListenNotify() bool { return false }
