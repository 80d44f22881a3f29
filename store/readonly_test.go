package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenReadOnly: a read-only store reads what a writer stored, every write through it is
// refused by the database, and opening changes no file: a missing database is not created, an
// empty file is not given a schema, and an existing database's bytes stay the same.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, dsn string) {
		w := openStore(t, dsn)
		run, err := w.CreateRun(ctx, RunSpec{Identity: "id", Experiment: "x", Cells: []CellSpec{{Index: 0, Key: "a"}, {Index: 1, Key: "b"}}})
		if err != nil {
			t.Fatal(err)
		}
		var before []byte
		if !IsPostgres(dsn) {
			w.Close() // checkpoints the WAL into the file, so that its bytes are the whole database
			before = readFile(t, dsn)
		}
		r, err := OpenReadOnly(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		runs, err := r.Runs(ctx)
		if err != nil || len(runs) != 1 || runs[0].Cells != 2 {
			t.Fatalf("runs read-only: %+v, %v; want one run of 2 cells", runs, err)
		}
		writes := map[string]func() error{
			"CreateRun": func() error {
				_, err := r.CreateRun(ctx, RunSpec{Identity: "id2", Experiment: "x"})
				return err
			},
			"SaveResult": func() error { return r.SaveResult(ctx, run.ID, []byte(`{}`)) },
			"Claim": func() error {
				_, err := r.Claim(ctx, ClaimOptions{})
				return err
			},
			"DeleteRun": func() error { return r.DeleteRun(ctx, run.ID) },
		}
		for name, write := range writes {
			if err := write(); err == nil {
				t.Errorf("%s through a read-only store succeeded", name)
			}
		}
		if cells, err := r.Cells(ctx, run.ID); err != nil || len(cells) != 2 || cells[0].Status != Pending {
			t.Errorf("after the refused writes: %+v, %v; want 2 pending cells", cells, err)
		}
		if !IsPostgres(dsn) {
			r.Close()
			if after := readFile(t, dsn); !bytes.Equal(before, after) {
				t.Error("opening read-only changed the database file")
			}
		}
	})

	t.Run("missing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "absent")
		path := filepath.Join(dir, "store.db")
		if s, err := OpenReadOnly(ctx, path); err == nil {
			s.Close()
			t.Fatal("opened a store that does not exist")
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("OpenReadOnly of a missing store created its directory: %v", err)
		}
	})

	t.Run("not a store", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenReadOnly(ctx, path)
		if err == nil {
			s.Close()
			t.Fatal("opened an empty file as a store")
		}
		if !strings.Contains(err.Error(), "not a hyperflat store") {
			t.Errorf("error %q does not say it is not a store", err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
			t.Errorf("the empty file was written to: %v, %v", fi, err)
		}
	})

	t.Run("password masked", func(t *testing.T) {
		_, err := OpenReadOnly(ctx, "postgres://hf:s3cret@127.0.0.1:1/none?connect_timeout=1")
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error %v: want a failure that does not show the password", err)
		}
	})
}

func readFile(t *testing.T, dsn string) []byte {
	t.Helper()
	path, _, err := SQLitePath(dsn)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
