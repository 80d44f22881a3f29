package store

import (
	"context"
	"fmt"
)

// FindOrCreateRun returns the latest run with spec's identity, creating it when there is
// none. Concurrent callers with the same identity — the shards of an Indexed Job starting
// together, in any process or on any machine — all get the same run: PostgreSQL serializes
// them with an advisory lock on the identity, SQLite with a lock file beside the database.
func (s *Store) FindOrCreateRun(ctx context.Context, spec RunSpec) (Run, error) {
	unlock, err := s.lockIdentity(ctx, spec.Identity)
	if err != nil {
		return Run{}, fmt.Errorf("store: locking run identity %s: %w", spec.Identity, err)
	}
	defer unlock()
	if run, ok, err := s.FindRun(ctx, spec.Identity); err != nil || ok {
		return run, err
	}
	return s.CreateRun(ctx, spec)
}

func (s *Store) lockIdentity(ctx context.Context, identity string) (func(), error) {
	if s.Kind() == "postgres" {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		// A session-level lock held on this connection while Find and Create run on others.
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext($1))`, "hyperflat-run:"+identity); err != nil {
			conn.Close()
			return nil, err
		}
		return func() {
			conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(hashtext($1))`, "hyperflat-run:"+identity)
			conn.Close()
		}, nil
	}
	_, path, memory, err := sqliteName(s.dsn)
	if err != nil {
		return nil, err
	}
	if memory {
		return func() {}, nil // one process: CreateRun's own lock suffices
	}
	return lockFile(path + ".lock")
}
