package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
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
		if err = checkConninfo(dsn); err == nil {
			name, err = readOnlyPostgres(dsn)
		}
		if err == nil {
			s.db, err = sql.Open("pgx", name)
		}
	default:
		s.d = sqliteDialect
		var name string
		if name, err = readOnlySQLite(dsn, false); err == nil {
			s.db, err = sql.Open("sqlite", name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s read-only: %w", s.DSN(), err)
	}
	err = s.checkSchema(ctx)
	if err != nil && s.d.kind == "sqlite" && isReadOnlyError(err) {
		// A WAL database needs its -shm file, which SQLite cannot create in a directory this
		// process cannot write: with no writer there either (a writer keeps the -wal file, which
		// it could not have created), the file is read as it stands.
		s.db.Close()
		var name string
		if err = checkNoWAL(dsn); err != nil {
			return nil, fmt.Errorf("store: open %s read-only: %w", s.DSN(), err)
		}
		if name, err = readOnlySQLite(dsn, true); err == nil {
			s.db, err = sql.Open("sqlite", name)
		}
		if err != nil {
			return nil, fmt.Errorf("store: open %s read-only: %w", s.DSN(), err)
		}
		s.snapshot = true
		err = s.checkSchema(ctx)
	}
	if err != nil {
		s.db.Close()
		return nil, fmt.Errorf("store: open %s read-only: %w", s.DSN(), err)
	}
	s.readOnly = true
	// A viewer serves many clients from one handle: a bounded pool, whose idle connections
	// (SQLite file handles, PostgreSQL sessions) are closed once the clients have gone.
	s.db.SetMaxOpenConns(readOnlyConns)
	s.db.SetMaxIdleConns(2)
	s.db.SetConnMaxIdleTime(30 * time.Second)
	return s, nil
}

// readOnlyConns bounds a read-only store's connections: reads queue for one beyond it.
const readOnlyConns = 8

// ReadOnly reports whether the store was opened with OpenReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }

// Snapshot reports whether a read-only SQLite store is read as the file stood when opened,
// because its directory cannot be written (SQLite's immutable mode): changes made later by
// others do not show.
func (s *Store) Snapshot() bool { return s.snapshot }

// readOnlySQLite is the driver name of an SQLite DSN opened read-only. It is always a file:
// URI, because only then does SQLite read the mode parameter; the database's journal mode
// (WAL, set by whoever created it) is left as it is, since changing it is a write.
//
// immutable opens it as a file that cannot change, which needs no -shm file: for a database
// in a directory this process cannot write.
func readOnlySQLite(dsn string, immutable bool) (string, error) {
	path, query, err := SQLitePath(dsn)
	if err != nil {
		return "", err
	}
	if path == "" {
		return "", errors.New("an in-memory database has nothing to read")
	}
	// mode=ro would report a missing file only at the first query, as "unable to open".
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("no store at %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file, so not a store", path)
	}
	params := url.Values{}
	params.Set("mode", "ro")
	if immutable {
		params.Set("immutable", "1")
	}
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMS))
	name := fileURI(path) + "?" + params.Encode()
	if query != "" {
		name += "&" + query
	}
	return name, nil
}

// checkNoWAL refuses to read the SQLite database at dsn as an immutable file when a write-ahead
// log beside it holds transactions: immutable mode ignores the log, so the store would be read
// without its latest changes.
func checkNoWAL(dsn string) error {
	path, _, err := SQLitePath(dsn)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("its write-ahead log %s-wal holds changes not yet in %s, which SQLite cannot read without creating %s-shm in a directory this process cannot write (open it once where the directory is writable, or copy the three files to one that is)",
			path, path, path)
	}
	return nil
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
		if isReadOnlyError(err) {
			return fmt.Errorf("cannot read it: %w", err)
		}
		return fmt.Errorf("not a hyperflat store (reading its schema version: %w)", err)
	}
	if version == 0 {
		return errors.New("it records no schema version (a damaged store?)")
	}
	if version < 1 || version > schemaVersion {
		return fmt.Errorf("database schema version %d; this program reads versions 1 to %d", version, schemaVersion)
	}
	s.version = version
	return nil
}
