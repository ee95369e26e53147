// Package worker is the engine's job worker: what a job of the engine's
// queue means when a replica takes it. A core.JobKindRun job (a RunJob:
// a background run or pipeline, queued by RunBackground) is decided by its
// run's record, started, retried under its onLost policy, ended lost or
// snoozed while another replica runs it; a core.JobKindTick job is a
// schedule's tick, handed to the Ticks (package schedule).
//
// It drives the engine through Runner, a small interface defined here
// that the engine implements with a type of its own, and reads the run
// records through core.Storage; it never imports the engine. If you run
// agents, set engine.Config.Jobs; you do not need this package. If you
// write a queue, you need core.JobQueue and core/jobtest.
package worker
