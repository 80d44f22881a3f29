package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsUnavailable reports whether err says the database could not be reached or dropped the
// connection — a server restarting, a network gone for a while — rather than that the
// operation is wrong: the same call may succeed later, on a new connection (database/sql opens
// one for the next call). A cancelled or expired context is not unavailability.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	for _, e := range []error{driver.ErrBadConn, io.EOF, io.ErrUnexpectedEOF, syscall.ECONNREFUSED,
		syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH} {
		if errors.Is(err, e) {
			return true
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08 is connection exceptions; 57P01-57P03 a server shutting down, crashed or
		// starting; 53300 too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) {
		return true
	}
	// pgx reports a connection it closed after a failure as "conn closed".
	return strings.Contains(err.Error(), "conn closed")
}
