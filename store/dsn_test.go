package store

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 16 item 7: a key=value PostgreSQL DSN was taken as a SQLite file name (a file named
// after the DSN, password included) and errors printed the password.
func TestKeyValueDSNIsPostgres(t *testing.T) {
	for dsn, want := range map[string]bool{
		"host=127.0.0.1 password=S3cret dbname=x": true,
		"  dbname = x":                  true,
		"user=hf":                       true,
		"postgres://u@h/db":             true,
		"postgresql://u@h/db":           true,
		"/tmp/x.db":                     false,
		"results/hyperflat.db":          false,
		"x=1/hyperflat.db":              true, // written sqlite://x=1/hyperflat.db or ./x=1/…
		"./x=1/hyperflat.db":            false,
		"sqlite://host=x.db":            false,
		"file:/tmp/a%3Fb/hyperflat.db":  false,
		":memory:":                      false,
		"C:\\results\\hyperflat.db":     false,
		"results?_pragma=cache_size(1)": false,
	} {
		if got := IsPostgres(dsn); got != want {
			t.Errorf("IsPostgres(%q) = %v, want %v", dsn, got, want)
		}
	}
	// No server listens on port 1: Open fails, but as PostgreSQL, with the password masked,
	// and writes no file.
	t.Chdir(t.TempDir())
	dsn := "host=127.0.0.1 port=1 user=hf password=S3cret dbname=x connect_timeout=2"
	s, err := Open(context.Background(), dsn)
	if err == nil {
		s.Close()
		t.Fatal("Open of a PostgreSQL server that is not there succeeded")
	}
	if strings.Contains(err.Error(), "S3cret") || !strings.Contains(err.Error(), "password=xxxxx") {
		t.Errorf("error %q shows the password or not the masked DSN", err)
	}
	if entries, _ := os.ReadDir("."); len(entries) > 0 {
		t.Errorf("Open of a key=value DSN wrote %s", entries[0].Name())
	}
}

func TestMaskKeyValueDSN(t *testing.T) {
	for dsn, want := range map[string]string{
		"host=127.0.0.1 password=S3cret dbname=x":        "host=127.0.0.1 password=xxxxx dbname=x",
		"host=h password = 'two words' dbname=x":         "host=h password = xxxxx dbname=x",
		`password='it\'s' user=u`:                        "password=xxxxx user=u",
		"user=u PASSWORD=S3cret":                         "user=u PASSWORD=xxxxx",
		"host=h dbname=x":                                "host=h dbname=x",
		"password=":                                      "password=xxxxx",
		"postgres://u:S3cret@h/db?password=S3cret&x=1":   "postgres://u:xxxxx@h/db?password=xxxxx&x=1",
		"postgres://u:S3cret@h:bad port/db":              "postgres://(unparsable)",
		filepath.Join("results", "password=1", "x.db"):   filepath.Join("results", "password=1", "x.db"),
		"host=h passfile=/p sslpassword=S3cret dbname=x": "host=h passfile=/p sslpassword=xxxxx dbname=x",
		"postgres://h/db?sslpassword=S3cret":             "postgres://h/db?sslpassword=xxxxx",
	} {
		if got := MaskDSN(dsn); got != want {
			t.Errorf("MaskDSN(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// Issue 16 item 8: a "?" in the --out folder split the database path: the file was written
// outside the folder and the rest passed to the driver as options.
func TestSQLitePathWithQuestionMark(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"x?x=1", "a%3Fb", "h#1", "host=y", "plain"} {
		path := filepath.Join(root, dir, "hyperflat.db")
		dsn := SQLiteDSN(path)
		if got, _, err := SQLitePath(dsn); err != nil || got != path {
			t.Errorf("SQLitePath(SQLiteDSN(%q)) = %q, %v", path, got, err)
		}
		s, err := Open(context.Background(), dsn)
		if err != nil {
			t.Fatalf("Open(%q): %v", dsn, err)
		}
		createRun(t, s, "q", 1)
		if _, err := s.FindOrCreateRun(context.Background(), spec("q2", 1)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: the database is not where asked: %v", dir, err)
		}
		if _, err := os.Stat(path + ".lock"); err != nil {
			t.Errorf("%s: the lock file is not beside the database: %v", dir, err)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 5 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files outside the asked folders: %v", names)
	}
	if dsn := SQLiteDSN("/tmp/results/hyperflat.db"); dsn != "/tmp/results/hyperflat.db" {
		t.Errorf("an ordinary path became %q", dsn)
	}
	if dsn := SQLiteDSN(filepath.Join(root, "x?x=1", "hyperflat.db")); !strings.HasPrefix(dsn, "file:/") || !strings.Contains(dsn, "x%3Fx=1") {
		t.Errorf("SQLiteDSN with a ? = %q", dsn)
	}
}

// A key=value DSN reaches PostgreSQL, its password masked in DSN().
func TestKeyValueDSNOpensPostgres(t *testing.T) {
	dsn := postgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Skipf("not a URL DSN: %v", err)
	}
	kv := []string{"host=" + u.Hostname(), "dbname=" + strings.TrimPrefix(u.Path, "/"), "search_path=" + u.Query().Get("search_path")}
	if p := u.Port(); p != "" {
		kv = append(kv, "port="+p)
	}
	if u.User != nil {
		kv = append(kv, "user="+u.User.Username())
	}
	pw, ok := u.User.Password()
	if !ok {
		pw = "S3cret" // the test server trusts loopback connections and ignores it
	}
	kv = append(kv, "password='"+strings.ReplaceAll(pw, "'", `\'`)+"'")
	if m := u.Query().Get("sslmode"); m != "" {
		kv = append(kv, "sslmode="+m)
	}
	s := openStore(t, strings.Join(kv, " "))
	if s.Kind() != "postgres" || strings.Contains(s.DSN(), pw) || !strings.Contains(s.DSN(), "password=xxxxx") {
		t.Errorf("Kind %q DSN %q", s.Kind(), s.DSN())
	}
	createRun(t, s, "kv", 2)
}
