package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// OpenReadOnly opens an existing store at dsn (the forms Open takes) for reading only: it
// creates no file, directory or schema, and the database refuses every write made through the
// returned Store, so that a viewer (hyperflat serve) cannot change what workers are filling.
// SQLite is opened with mode=ro; PostgreSQL sessions have default_transaction_read_only on.
// A database without this package's schema, or with a newer one, is an error.
func OpenReadOnly(ctx context.Context, dsn string) (*Store, error) {
	s := &Store{dsn: dsn}
	var err error
	switch {
	case IsPostgres(dsn):
		s.d = postgresDialect
		var name string
		if name, err = readOnlyPostgres(dsn); err == nil {
			s.db, err = sql.Open("pgx", name)
		}
	default:
		s.d = sqliteDialect
		var name string
		if name, err = readOnlySQLite(dsn); err == nil {
			s.db, err = sql.Open("sqlite", name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s read-only: %w", s.DSN(), err)
	}
	if err := s.checkSchema(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("store: open %s read-only: %w", s.DSN(), err)
	}
	return s, nil
}

// readOnlySQLite is the driver name of an SQLite DSN opened read-only. It is always a file:
// URI, because only then does SQLite read the mode parameter; the database's journal mode
// (WAL, set by whoever created it) is left as it is, since changing it is a write.
func readOnlySQLite(dsn string) (string, error) {
	path, query, err := SQLitePath(dsn)
	if err != nil {
		return "", err
	}
	if path == "" {
		return "", errors.New("an in-memory database has nothing to read")
	}
	// mode=ro would report a missing file only at the first query, as "unable to open".
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("no store at %s: %w", path, err)
	}
	params := url.Values{}
	params.Set("mode", "ro")
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMS))
	name := fileURI(path) + "?" + params.Encode()
	if query != "" {
		name += "&" + query
	}
	return name, nil
}

// readOnlyPostgres adds default_transaction_read_only=on to a PostgreSQL DSN; pgx sends
// parameters it does not know as run-time settings of every session it opens.
func readOnlyPostgres(dsn string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", errors.New("unparsable URL")
		}
		q := u.Query()
		q.Set("default_transaction_read_only", "on")
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " default_transaction_read_only=on", nil
}

// checkSchema fails unless the database holds the schema this package reads.
func (s *Store) checkSchema(ctx context.Context) error {
	var version int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&version)
	if err != nil {
		return fmt.Errorf("not a hyperflat store (reading its schema version: %w)", err)
	}
	if version < 1 || version > schemaVersion {
		return fmt.Errorf("database schema version %d; this program reads versions 1 to %d", version, schemaVersion)
	}
	s.version = version
	return nil
}
