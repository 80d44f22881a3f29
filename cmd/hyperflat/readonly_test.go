package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadingCommandsWriteNothing: runs, report and export leave a store's directory (but for
// SQLite's -wal and -shm files) and its schema-version table as they were (they used to create PATH.lock and restore a deleted
// version row); a writing command where no lock file can be made says so instead of
// panicking; and a DSN like a=b.db gets the way to name such an SQLite file.
func TestReadingCommandsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "s.db")
	submitSmallRuns(t, dsn, "3")
	if code, out, errs := runCLI("worker", "--store", dsn, "--quiet"); code != 0 {
		t.Fatalf("worker: exit %d: %s%s", code, out, errs)
	}
	if err := os.Remove(dsn + ".lock"); err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, dir)
	exports := t.TempDir()
	for _, args := range [][]string{
		{"runs", "--store", dsn},
		{"report", "--store", dsn},
		{"export", "--store", dsn, "--dir", exports},
	} {
		if code, _, errs := runCLI(args...); code != 0 {
			t.Errorf("%s: exit %d: %s", args[0], code, errs)
		}
		if after := dirNames(t, dir); after != before {
			t.Errorf("%s changed the store's directory: %s, was %s", args[0], after, before)
		}
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM schema_version`); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("runs", "--store", dsn)
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if code != 1 || n != 0 || !strings.Contains(errs, "no schema version") {
		t.Errorf("runs on a store without its version row: exit %d, %d rows after: %s", code, n, errs)
	}
	files, _ := filepath.Glob(filepath.Join(exports, "*.jsonl.gz"))
	code, _, errs = runCLI(append([]string{"import", "--out", "/proc/self"}, files...)...)
	if code != 1 || strings.Contains(errs, "internal error") || !strings.Contains(errs, "/proc/self/hyperflat.db.lock") {
		t.Errorf("import --out /proc/self: exit %d: %s; want the lock file named", code, errs)
	}
	code, _, errs = runCLI("runs", "--store", "a=b.db")
	if code != 1 || !strings.Contains(errs, "sqlite://a=b.db") {
		t.Errorf("runs --store a=b.db: exit %d: %s; want the sqlite:// hint", code, errs)
	}
}

func dirNames(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		// SQLite's shared-memory and log files, which any reader of a WAL database opens
		// (creating them when it can), are not the store's content.
		if !strings.HasSuffix(e.Name(), "-shm") && !strings.HasSuffix(e.Name(), "-wal") {
			names = append(names, e.Name())
		}
	}
	return strings.Join(names, " ")
}
