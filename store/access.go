package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// SQLite's primary result codes that mean the file or its directory cannot be written or opened
// (https://sqlite.org/rescode.html); extended codes carry them in their low byte.
const (
	sqliteCantOpen = 14
	sqliteReadOnly = 8
)

// sqliteCode is the primary result code of an SQLite error (0 when err is not one).
func sqliteCode(err error) int {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code() & 0xff
	}
	return 0
}

func isReadOnlyError(err error) bool {
	c := sqliteCode(err)
	return c == sqliteReadOnly || c == sqliteCantOpen
}

// unwritable names the file a writing open of the SQLite database at path could not write:
// the database itself, or its directory, where SQLite keeps the -wal and -shm files beside it.
func unwritable(path string, err error) error {
	dir := filepath.Dir(path)
	switch {
	case !canWrite(path):
		return fmt.Errorf("this command writes the store, and %s cannot be written: %w", path, err)
	case !canWrite(dir):
		return fmt.Errorf("this command writes the store, and its directory %s cannot be written (SQLite keeps %s-wal and %s-shm there): %w",
			dir, filepath.Base(path), filepath.Base(path), err)
	}
	return fmt.Errorf("this command writes the store, and %s (or its -wal or -shm file) cannot be written: %w", path, err)
}

// conninfoKeywords are libpq's connection keywords
// (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-PARAMKEYWORDS).
var conninfoKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`host hostaddr port dbname user password passfile require_auth
		channel_binding connect_timeout client_encoding options application_name
		fallback_application_name keepalives keepalives_idle keepalives_interval keepalives_count
		tcp_user_timeout replication gssencmode sslmode requiressl sslnegotiation sslcompression
		sslcert sslkey sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni requirepeer
		ssl_min_protocol_version ssl_max_protocol_version min_protocol_version max_protocol_version
		krbsrvname gsslib gssdelegation service target_session_attrs load_balance_hosts`) {
		conninfoKeywords[k] = true
	}
}

// checkConninfo refuses a key=value DSN whose first key is not a libpq keyword: "a=b.db" is
// far likelier an SQLite file with "=" in its name than a PostgreSQL connection string, and
// connecting would fail with a message about a server nobody meant.
func checkConninfo(dsn string) error {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return nil
	}
	key, _, _ := strings.Cut(strings.TrimSpace(dsn), "=")
	key = strings.TrimSpace(key)
	if conninfoKeywords[key] {
		return nil
	}
	return fmt.Errorf("it reads as a PostgreSQL key=value connection string, but %q is not a PostgreSQL connection keyword (host, port, dbname, user, …); an SQLite file whose name holds \"=\" is written sqlite://%s",
		key, MaskDSN(dsn))
}
