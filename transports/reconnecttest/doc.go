// Package reconnecttest holds the acceptance tests of bread's lossless
// reconnect (issue 28) that need real stores and a real bus: a
// 10,000-delta run relayed by the Go remote-agent client
// (httpstream/remoteagent) while the test drops its connection at 20
// seeded points, on every store (memory, SQLite, PostgreSQL, MySQL) and
// across two replicas that share a PostgreSQL store and a bus (Redis, NATS
// JetStream), the run on one and the reconnects on the other. It has no code of its own:
// it is a module so that no library module depends on every store.
package reconnecttest
