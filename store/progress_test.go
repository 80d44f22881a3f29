package store

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSaveProgress: a cell's saved progress comes back with its next claim (after a lost lease,
// a release or a retry), only its holder may save it, and completing the cell discards it.
func TestSaveProgress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		run := createRun(t, s, "progress", 2)
		only := ClaimOptions{Runs: []int64{run.ID}, Worker: "a", Lease: 50 * time.Millisecond}
		first := mustClaim(t, s, only)
		if first.Progress != nil {
			t.Fatalf("first claim's progress %s, want none", first.Progress)
		}
		if err := s.SaveProgress(ctx, first, []byte(`{"calls":1}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveProgress(ctx, first, []byte(`{"calls":2}`)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the worker dies: its lease expires
		only.Worker, only.Lease = "b", time.Minute
		second := mustClaim(t, s, only)
		if second.Index != first.Index || string(second.Progress) != `{"calls":2}` {
			t.Fatalf("claim after the lease expired: cell %d progress %s, want cell %d and the latest save", second.Index, second.Progress, first.Index)
		}
		if err := s.SaveProgress(ctx, first, []byte(`{"calls":9}`)); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("a save by the lost lease: %v, want ErrLeaseLost", err)
		}
		if err := s.SaveProgress(ctx, second, []byte(`{"calls":3}`)); err != nil {
			t.Fatal(err)
		}
		if saved, err := s.SavedProgress(ctx, run.ID); err != nil || len(saved) != 1 || string(saved[second.Index]) != `{"calls":3}` {
			t.Fatalf("SavedProgress = %v, %v; want cell %d's latest save only", saved, err, second.Index)
		}
		if err := s.Release(ctx, second); err != nil {
			t.Fatal(err)
		}
		third := mustClaim(t, s, only)
		if string(third.Progress) != `{"calls":3}` {
			t.Errorf("claim after a release: progress %s, want the released attempt's", third.Progress)
		}
		if err := s.Fail(ctx, third, "killed", 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Retry(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		fourth := mustClaim(t, s, only)
		if string(fourth.Progress) != `{"calls":3}` {
			t.Errorf("claim after a retry: progress %s, want the failed attempt's", fourth.Progress)
		}
		if err := s.Complete(ctx, fourth, Outcome{Seconds: 1}); err != nil {
			t.Fatal(err)
		}
		var left int
		if err := s.db.QueryRow(`SELECT COUNT(*) FROM cells WHERE progress IS NOT NULL`).Scan(&left); err != nil || left != 0 {
			t.Errorf("%d cells keep progress after completion (%v), want 0", left, err)
		}
		if saved, err := s.SavedProgress(ctx, run.ID); err != nil || len(saved) != 0 {
			t.Errorf("SavedProgress after completion = %v, %v; want none", saved, err)
		}
		if other := mustClaim(t, s, only); other.Index == fourth.Index || other.Progress != nil {
			t.Errorf("the other cell: %+v, want cell %d without progress", other, 1-fourth.Index)
		}
	})
}

// TestUpgradeFromVersion1: Open adds the progress and build columns to a version 1 database
// and keeps its runs; a read-only open reads a version 1 database as it is.
func TestUpgradeFromVersion1(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		run := createRun(t, s, "old", 2)
		for _, stmt := range []string{`ALTER TABLE cells DROP COLUMN progress`, `ALTER TABLE runs DROP COLUMN build`, `UPDATE schema_version SET version = 1`} {
			if _, err := s.db.Exec(stmt); err != nil {
				t.Fatalf("making a version 1 database: %v", err)
			}
		}
		s.Close()

		ro, err := OpenReadOnly(ctx, dsn)
		if err != nil {
			t.Fatalf("read-only open of a version 1 database: %v", err)
		}
		if cs := cells(t, ro, run.ID); len(cs) != 2 {
			t.Errorf("read-only: %d cells, want 2", len(cs))
		}
		if saved, err := ro.SavedProgress(ctx, run.ID); err != nil || len(saved) != 0 {
			t.Errorf("read-only SavedProgress of a version 1 database = %v, %v; want none", saved, err)
		}
		ro.Close()

		s = openStore(t, dsn)
		var version int
		if err := s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&version); err != nil || version != schemaVersion {
			t.Errorf("after the upgrade: schema version %d (%v), want %d", version, err, schemaVersion)
		}
		l := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}})
		if err := s.SaveProgress(ctx, l, []byte(`[1]`)); err != nil {
			t.Errorf("saving progress in an upgraded database: %v", err)
		}
		if r := getRun(t, s, run.ID); r.Identity != "old" || r.Cells != 2 {
			t.Errorf("run after the upgrade %+v", r)
		}
	})
}

// TestUpgradeFromVersion2: Open adds the build column to a version 2 database, its runs of
// unknown build (which a claim limited to a build still takes); a read-only open reads it as
// it is.
func TestUpgradeFromVersion2(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		run := createRun(t, s, "v2", 1)
		for _, stmt := range []string{`ALTER TABLE runs DROP COLUMN build`, `UPDATE schema_version SET version = 2`} {
			if _, err := s.db.Exec(stmt); err != nil {
				t.Fatalf("making a version 2 database: %v", err)
			}
		}
		s.Close()
		ro, err := OpenReadOnly(ctx, dsn)
		if err != nil {
			t.Fatalf("read-only open of a version 2 database: %v", err)
		}
		if r, err := ro.GetRun(ctx, run.ID); err != nil || r.Build != "" || r.Cells != 1 {
			t.Errorf("read-only: run %+v, %v", r, err)
		}
		ro.Close()
		s = openStore(t, dsn)
		if r := getRun(t, s, run.ID); r.Build != "" || r.Identity != "v2" {
			t.Errorf("run after the upgrade %+v", r)
		}
		if l := mustClaim(t, s, ClaimOptions{Build: "v9 blas=gonum"}); l.Run != run.ID {
			t.Errorf("a build's claim took run %d, want the upgraded run %d", l.Run, run.ID)
		}
	})
}

// TestExportCarriesProgress: an export carries an unfinished cell's progress (not a finished
// one's, which completion discarded) to the store it is imported into, where a cell that has
// progress of its own keeps it.
func TestExportCarriesProgress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		src := openStore(t, dsn)
		run := createRun(t, src, "carry", 3)
		only := ClaimOptions{Runs: []int64{run.ID}}
		done := mustClaim(t, src, only)
		if err := src.SaveProgress(ctx, done, []byte(`"done's"`)); err != nil {
			t.Fatal(err)
		}
		if err := src.Complete(ctx, done, Outcome{Seconds: 1}); err != nil {
			t.Fatal(err)
		}
		if err := src.SaveProgress(ctx, mustClaim(t, src, only), []byte(`{"calls":7}`)); err != nil {
			t.Fatal(err)
		}
		var export bytes.Buffer
		if err := src.ExportRun(ctx, run.ID, &export); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(export.String(), `"progress"`); n != 1 || !strings.Contains(export.String(), `"progress":{"calls":7}`) {
			t.Fatalf("export with %d progress fields, want the running cell's only:\n%s", n, export.String())
		}

		dst := openStore(t, filepath.Join(t.TempDir(), "dst.db"))
		st, err := dst.ImportRun(ctx, bytes.NewReader(export.Bytes()))
		if err != nil || st.Resumable != 1 || st.Filled != 1 {
			t.Fatalf("import: %+v, %v; want 1 filled, 1 resumable", st, err)
		}
		if l := mustClaim(t, dst, ClaimOptions{Runs: []int64{st.Run.ID}}); l.Index != 1 || string(l.Progress) != `{"calls":7}` {
			t.Errorf("claim after the import: cell %d, progress %s; want cell 1 with the exported progress", l.Index, l.Progress)
		}

		mine := openStore(t, filepath.Join(t.TempDir(), "mine.db"))
		r := createRun(t, mine, "carry", 3)
		mustClaim(t, mine, ClaimOptions{Runs: []int64{r.ID}}) // cell 0
		if err := mine.SaveProgress(ctx, mustClaim(t, mine, ClaimOptions{Runs: []int64{r.ID}}), []byte(`{"calls":9}`)); err != nil {
			t.Fatal(err)
		}
		if st, err := mine.ImportRun(ctx, bytes.NewReader(export.Bytes())); err != nil || st.Resumable != 0 {
			t.Errorf("import over a cell with progress of its own: %+v, %v; want none taken", st, err)
		}
		var kept string
		if err := mine.db.QueryRow(`SELECT progress FROM cells WHERE run_id = $1 AND idx = 1`, r.ID).Scan(&kept); err != nil || kept != `{"calls":9}` {
			t.Errorf("the store's own progress: %s (%v), want kept", kept, err)
		}
	})
}
