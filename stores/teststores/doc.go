// Package teststores opens every first-party store for the tests of other
// modules: the memory store, SQLite on a temporary file, and PostgreSQL on a
// fresh schema of the server BREAD_TEST_POSTGRES_URL names. A protocol or
// plugin test that reads a run, a task or a checkpoint back runs once per
// store with Each, so a difference between what a store keeps and what a
// live stream carries (a payload read back as raw JSON, say) shows up.
//
// Without BREAD_TEST_POSTGRES_URL the PostgreSQL case skips with a message
// saying so; BREAD_TEST_REQUIRE=1 (CI) turns that skip into a failure.
//
// A store adapter proves itself with core/storetest instead; this package
// is for code that uses a store, not for code that implements one.
package teststores
