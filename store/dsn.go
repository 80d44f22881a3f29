package store

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// conninfoKey matches the start of a libpq key=value connection string ("host=…",
// "dbname = …"). A SQLite file whose name starts so must be given as sqlite://PATH.
var conninfoKey = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*\s*=`)

// IsPostgres reports whether dsn names a PostgreSQL database: a postgres:// or
// postgresql:// URL, or a libpq key=value string such as
// "host=db.example user=hf password=… dbname=results". Everything else is SQLite.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || conninfoKey.MatchString(dsn)
}

// conninfoPassword matches a password in a key=value string: quoted (with backslash escapes)
// or up to the next space.
var conninfoPassword = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// MaskDSN returns dsn with any password replaced by xxxxx, for messages: the password of a
// URL's user, its password and sslpassword parameters, and those of a key=value string.
func MaskDSN(dsn string) string {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		u, err := url.Parse(dsn)
		if err != nil {
			// Do not echo what might hold a password.
			scheme, _, _ := strings.Cut(dsn, "://")
			return scheme + "://(unparsable)"
		}
		q := u.Query()
		for _, k := range []string{"password", "sslpassword"} {
			if q.Has(k) {
				q.Set(k, "xxxxx")
				u.RawQuery = q.Encode()
			}
		}
		return u.Redacted()
	case conninfoKey.MatchString(dsn):
		return conninfoPassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	return dsn
}

func maskDSN(dsn string) string { return MaskDSN(dsn) }

// SQLiteDSN is the DSN of the SQLite file at path, whatever its name holds: the path itself
// when Open would read it back unchanged, else a file: URI with the path percent-encoded (a
// "?" in a directory name would otherwise start the driver's parameters, and a name like
// "host=x" would be taken for PostgreSQL).
func SQLiteDSN(path string) string {
	if !strings.ContainsAny(path, "?%#") && !IsPostgres(path) && !strings.HasPrefix(path, "sqlite://") &&
		!strings.HasPrefix(path, "file:") && path != ":memory:" {
		return path
	}
	return fileURI(path)
}

// fileURI is an SQLite URI for the file at path, made absolute so that it has no authority
// part, the path percent-encoded.
func fileURI(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter
	}
	return "file:" + (&url.URL{Path: p}).EscapedPath()
}

// SQLitePath returns the file an SQLite DSN opens ("" for :memory:) and the driver
// parameters that follow it. The path of a file: URI is percent-decoded.
func SQLitePath(dsn string) (path, query string, err error) {
	if IsPostgres(dsn) {
		return "", "", fmt.Errorf("store: %s is a PostgreSQL DSN", MaskDSN(dsn))
	}
	path = dsn
	uri := false
	switch {
	case strings.HasPrefix(path, "sqlite://"):
		path = strings.TrimPrefix(path, "sqlite://")
	case strings.HasPrefix(path, "file://"):
		path, uri = strings.TrimPrefix(path, "file://"), true
	case strings.HasPrefix(path, "file:"):
		path, uri = strings.TrimPrefix(path, "file:"), true
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}
	if uri {
		if path, err = url.PathUnescape(path); err != nil {
			return "", "", fmt.Errorf("store: %s: bad escape in the file: URI path: %w", dsn, err)
		}
	}
	if path == "" {
		return "", "", errors.New("no SQLite file path")
	}
	if path == ":memory:" {
		return "", query, nil
	}
	return path, query, nil
}

// sqliteName turns an SQLite DSN into the driver's name: the file with this package's
// connection parameters followed by the caller's. It creates the file's parent directories.
// path is the file ("" for :memory:).
func sqliteName(dsn string) (name, path string, memory bool, err error) {
	path, query, err := SQLitePath(dsn)
	if err != nil {
		return "", "", false, err
	}
	memory = path == ""
	file := ":memory:"
	if !memory {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", "", false, err
		}
		file = path
		if strings.ContainsRune(path, '?') {
			// The driver cuts a plain name at its first "?"; a file: URI is passed to SQLite
			// whole, which decodes the escaped path.
			file = fileURI(path)
		}
	}
	params := url.Values{}
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMS))
	params.Add("_pragma", "journal_mode(WAL)")
	params.Add("_pragma", "synchronous(NORMAL)")
	params.Add("_pragma", "foreign_keys(1)")
	params.Set("_txlock", "immediate")
	name = file + "?" + params.Encode()
	if query != "" {
		// The driver takes the first value of a single-valued key, so ours come first.
		name += "&" + query
	}
	return name, path, memory, nil
}
