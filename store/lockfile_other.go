//go:build !unix

package store

// lockFile has no cross-process lock here: processes that start sharded runs on one SQLite
// file at the same instant may create two runs (use PostgreSQL for shards).
func lockFile(string) (func(), error) { return func() {}, nil }

// canWrite cannot tell here; the database's own error stands.
func canWrite(string) bool { return true }
