// Package riverjobs is a core.JobQueue on River (github.com/riverqueue/river),
// on PostgreSQL or SQLite through database/sql: jobs stored in the database,
// shared by every replica that opens the same database, retried, snoozed and
// scheduled by River, with one job per key through River's unique jobs and
// schedules fired by the elected leader.
//
// Programs configure it (bread.yaml, or engine.Config.Jobs) and never call
// it: the engine is its only caller. For one process without a database to
// share, core/memory's NewQueue is the lighter choice.
package riverjobs
