//go:build unix

package store

import (
	"context"
	"database/sql"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// envUnwritable hands the stores TestUnwritableStores made to the copy of the test binary it
// runs as an unprivileged user.
const envUnwritable = "HYPERFLAT_TEST_UNWRITABLE_DIR"

// TestUnwritableStores: stores this process cannot write — in a read-only directory, a
// read-only file, a lock file it cannot create — are read by OpenReadOnly, and Open refuses
// them with an error naming the file (it panicked on a nil unlock). Permissions do not bind
// root, so as root the checks run in a copy of this test binary as the user nobody.
func TestUnwritableStores(t *testing.T) {
	if dir := os.Getenv(envUnwritable); dir != "" {
		checkUnwritable(t, dir)
		return
	}
	dir, err := os.MkdirTemp("", "hyperflat-unwritable-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	for _, sub := range []string{"rodir", "rofile", "lockowned"} {
		s := openStore(t, filepath.Join(dir, sub, "s.db"))
		if _, err := s.CreateRun(context.Background(), RunSpec{Identity: "i", Experiment: "x", Cells: []CellSpec{{Index: 0, Key: "a"}}}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	// rodir: the database may be written but nothing created beside it; rofile: the database
	// may not be written, its directory may; lockowned: the lock file exists and may not be
	// opened for writing.
	must(t, os.Chmod(filepath.Join(dir, "rofile", "s.db"), 0o444))
	must(t, os.Remove(filepath.Join(dir, "rofile", "s.db.lock")))
	must(t, os.Chmod(filepath.Join(dir, "rofile"), 0o777))
	must(t, os.Chmod(filepath.Join(dir, "lockowned", "s.db"), 0o666))
	must(t, os.Chmod(filepath.Join(dir, "rodir", "s.db"), 0o666))
	must(t, os.Chmod(filepath.Join(dir, "lockowned", "s.db.lock"), 0o444))
	must(t, os.Chmod(filepath.Join(dir, "lockowned"), 0o555))
	must(t, os.Remove(filepath.Join(dir, "rodir", "s.db.lock")))
	must(t, os.Chmod(filepath.Join(dir, "rodir"), 0o555))
	makeWALLeft(t, filepath.Join(dir, "walleft"))
	must(t, os.Chmod(dir, 0o755))
	if os.Getuid() != 0 {
		checkUnwritable(t, dir)
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "store.test")
	copyFile(t, self, bin)
	must(t, os.Chmod(bin, 0o755))
	cmd := exec.Command(bin, "-test.run", "^TestUnwritableStores$", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{envUnwritable + "=" + dir, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestUnwritableStores") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func checkUnwritable(t *testing.T, dir string) {
	ctx := context.Background()
	for _, c := range []struct {
		sub      string
		snapshot bool   // read as an immutable file
		names    string // what Open's error names
	}{
		{"rodir", true, filepath.Join(dir, "rodir", "s.db.lock")},
		{"rofile", false, filepath.Join(dir, "rofile", "s.db") + " cannot be written"},
		{"lockowned", true, filepath.Join(dir, "lockowned", "s.db.lock")},
	} {
		path := filepath.Join(dir, c.sub, "s.db")
		before := listDir(t, filepath.Dir(path))
		r, err := OpenReadOnly(ctx, path)
		if err != nil {
			t.Errorf("%s: OpenReadOnly: %v", c.sub, err)
		} else {
			if runs, err := r.Runs(ctx); err != nil || len(runs) != 1 {
				t.Errorf("%s: runs %v, %v; want the one run", c.sub, runs, err)
			}
			if r.Snapshot() != c.snapshot {
				t.Errorf("%s: Snapshot() = %v, want %v", c.sub, r.Snapshot(), c.snapshot)
			}
			r.Close()
		}
		w, err := Open(ctx, path)
		if err == nil {
			w.Close()
			t.Errorf("%s: Open of an unwritable store succeeded", c.sub)
		} else if !strings.Contains(err.Error(), c.names) || !strings.Contains(err.Error(), "writes the store") {
			t.Errorf("%s: Open: %v; want it to name %q", c.sub, err, c.names)
		}
		if c.sub != "rofile" {
			if after := listDir(t, filepath.Dir(path)); after != before {
				t.Errorf("%s: the directory changed: %s, was %s", c.sub, after, before)
			}
		}
	}
	// A log with changes not in the database, in a directory where no -shm can be made: read
	// as an immutable file, the store would silently lack those changes.
	if r, err := OpenReadOnly(ctx, filepath.Join(dir, "walleft", "s.db")); err == nil {
		runs, _ := r.Runs(ctx)
		r.Close()
		t.Errorf("walleft: OpenReadOnly read %d runs without the write-ahead log's; want it refused", len(runs))
	} else if !strings.Contains(err.Error(), "s.db-wal holds changes") {
		t.Errorf("walleft: OpenReadOnly: %v; want the -wal file named", err)
	}
	// A lock file that cannot exist at all: /proc/self is no place for one, even for root.
	if _, err := Open(ctx, "/proc/self/hyperflat.db"); err == nil || !strings.Contains(err.Error(), "hyperflat.db.lock") {
		t.Errorf("Open under /proc/self: %v; want an error naming the lock file", err)
	}
}

// makeWALLeft puts in dir (made read-only) a store whose run is only in its write-ahead log:
// copies of the database and its -wal file while a writer has the run uncheckpointed.
func makeWALLeft(t *testing.T, dir string) {
	src := filepath.Join(t.TempDir(), "s.db")
	s := openStore(t, src)
	if _, err := s.db.Exec(`PRAGMA wal_autocheckpoint = 0`); err != nil {
		t.Fatal(err)
	}
	s.db.SetMaxOpenConns(1) // the pragma holds for the one connection
	if _, err := s.CreateRun(context.Background(), RunSpec{Identity: "w", Experiment: "x", Cells: []CellSpec{{Index: 0, Key: "a"}}}); err != nil {
		t.Fatal(err)
	}
	must(t, os.Mkdir(dir, 0o755))
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, src+suffix, filepath.Join(dir, "s.db"+suffix))
	}
	if fi, err := os.Stat(filepath.Join(dir, "s.db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("no write-ahead log to leave: %v", err)
	}
	s.Close()
	must(t, os.Chmod(dir, 0o555))
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	must(t, err)
	defer in.Close()
	out, err := os.Create(to)
	must(t, err)
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	must(t, out.Close())
}

// TestReadOnlyOpenWritesNothing: OpenReadOnly creates no lock file beside the store and never
// restores a missing schema-version row (a reading command used to, through Open), and a
// device is refused as not a store.
func TestReadOnlyOpenWritesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := openStore(t, path)
	s.Close()
	must(t, os.Remove(path+".lock"))
	db, err := sql.Open("sqlite", path)
	must(t, err)
	_, err = db.Exec(`DELETE FROM schema_version`)
	must(t, err)
	db.Close()
	if r, err := OpenReadOnly(ctx, path); err == nil || !strings.Contains(err.Error(), "no schema version") {
		if r != nil {
			r.Close()
		}
		t.Errorf("OpenReadOnly of a store without its schema-version row: %v", err)
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Errorf("OpenReadOnly created %s.lock (%v)", path, err)
	}
	db, err = sql.Open("sqlite", path)
	must(t, err)
	var n int
	must(t, db.QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&n))
	db.Close()
	if n != 0 {
		t.Errorf("opening read-only wrote %d schema-version rows", n)
	}
	for _, open := range []func(context.Context, string) (*Store, error){Open, OpenReadOnly} {
		if s, err := open(ctx, "/dev/null"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			if s != nil {
				s.Close()
			}
			t.Errorf("opening /dev/null: %v; want it refused as not a regular file", err)
		}
	}
	if _, err := os.Stat("/dev/null.lock"); err == nil {
		t.Error("/dev/null.lock exists")
	}
}

// TestConninfoTypo: a DSN like "a=b.db" — a key=value string whose first key is no PostgreSQL
// keyword — is refused with the way to name an SQLite file with "=" in its name, instead of a
// connection error about a server.
func TestConninfoTypo(t *testing.T) {
	ctx := context.Background()
	for _, open := range []func(context.Context, string) (*Store, error){Open, OpenReadOnly} {
		_, err := open(ctx, "a=b.db")
		if err == nil || !strings.Contains(err.Error(), "sqlite://a=b.db") || !strings.Contains(err.Error(), `"a" is not a PostgreSQL connection keyword`) {
			t.Errorf("a=b.db: %v; want the hint sqlite://a=b.db", err)
		}
	}
	if err := checkConninfo("host=db.example user=hf dbname=results"); err != nil {
		t.Errorf("a real key=value string: %v", err)
	}
}
