package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/store"
)

// Issue 16 item 7: a key=value PostgreSQL DSN was opened as a SQLite file named after it
// (password included) and the password was printed.
func TestKeyValueStoreDSNIsPostgresAndMasked(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(EnvStore, "")
	dsn := "host=127.0.0.1 port=1 user=hf password=S3cret dbname=x connect_timeout=2"
	for _, cmd := range [][]string{{"runs"}, {"report"}, {"retire", "--run", "1"}} {
		code, out, errs := runCLI(append(cmd, "--store", dsn)...)
		if code != exitFailure || strings.Contains(out+errs, "S3cret") || !strings.Contains(errs, "password=xxxxx") {
			t.Errorf("%s --store %q: exit %d, stdout %q, stderr %q; want a failure to connect with the password masked", cmd, dsn, code, out, errs)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) > 0 {
		t.Errorf("a key=value DSN wrote the file %q", entries[0].Name())
	}
}

// Issue 16 item 8: a "?" in the --out folder split the database path.
func TestOutFolderWithQuestionMark(t *testing.T) {
	t.Setenv(EnvStore, "")
	out := filepath.Join(t.TempDir(), "x?x=1")
	empty := ""
	dsn := storeFlags{store: &empty}.dsn(out)
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(filepath.Join(out, "hyperflat.db")); err != nil {
		t.Fatalf("the store of --out %s is not in it (DSN %q): %v", out, dsn, err)
	}
	if code, stdout, errs := runCLI("runs", "--out", out); code != exitOK {
		t.Errorf("runs --out %s: exit %d, stdout %q, stderr %q", out, code, stdout, errs)
	}
}
