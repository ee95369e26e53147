// Package chaos is bread's system-wide fault test, for people changing how
// runs survive crashes: three `bread start` replicas on one PostgreSQL
// database, a private Redis bus and coordinator, River workers and a
// schedule, under a mixed load while replicas are killed, drained and
// paused, Redis restarts and PostgreSQL connections are cut; a checker then
// reads the store and holds it to named invariants. It runs as TestChaos
// when CHAOS_DURATION is set (make chaos); see README.md. Users of bread
// want the engine and cli packages instead.
package chaos
