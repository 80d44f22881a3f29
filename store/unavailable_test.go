package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestIsUnavailable: what a database restarting says is unavailability, which a worker rides
// out; a wrong operation, a missing row or an interrupt is not; nor is a store that was never
// there (an SQLite file's errors are not connection errors).
func TestIsUnavailable(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED),
		fmt.Errorf("read: %w", syscall.ECONNRESET),
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "08006"},
	} {
		if !IsUnavailable(err) {
			t.Errorf("IsUnavailable(%v) = false", err)
		}
	}
	for _, err := range []error{nil, sql.ErrNoRows, context.Canceled, ErrLeaseLost,
		fmt.Errorf("wrapped: %w", context.DeadlineExceeded), &pgconn.PgError{Code: "23505", Message: "duplicate key"}} {
		if IsUnavailable(err) {
			t.Errorf("IsUnavailable(%v) = true", err)
		}
	}
	s := openStore(t, filepath.Join(t.TempDir(), "s.db"))
	if _, err := s.GetRun(context.Background(), 99); err == nil || IsUnavailable(err) {
		t.Errorf("a missing run: %v, IsUnavailable %v", err, IsUnavailable(err))
	}
	if _, err := s.db.Exec(`SELECT * FROM no_such_table`); err == nil || IsUnavailable(err) || errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a wrong query: %v", err)
	}
}
