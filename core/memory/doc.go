// Package memory is an in-process core.BreadStore: sessions, messages,
// checkpoints and loops, plus every optional capability (crumb log, task
// runs, knowledge graph, documents), kept in maps and gone when the process
// exits. It is meant for tests, examples and ephemeral runs; use a SQL store
// for anything that must survive a restart.
//
// A Store is safe for concurrent use. One RWMutex guards it, and stored
// values are never changed in place (an update replaces them, a log only
// grows), so readers copy results after releasing the lock and a long read
// never holds up a writer for long. Every result is a copy and every input is
// copied, so a caller can change either afterwards without touching the
// store. Logged crumbs are the exception the core contract allows: the
// CrumbLogEntry.Crumb pointer is shared, since crumbs are read-only once
// emitted.
//
// Knowledge and document search is a case-insensitive substring match (the
// original's keyword fallback); there is no vector search.
//
// NewQueue is an in-process core.JobQueue, the dev fallback for background
// runs and schedules; its jobs do not survive the process.
package memory
