package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportImport moves a run with done, failed, running and pending cells to another store
// (plain and gzipped), checks every stored field survived, merges a second export of the same
// run into a copy that finished other cells, and refuses an export whose plan differs.
func TestExportImport(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		src := openStore(t, dsn)
		run := createRun(t, src, "exp-id", 4)
		o := Outcome{Output: json.RawMessage(`{"v":[1,2.5]}`), Metrics: map[string]float64{"acc": 0.5, "nan": math.NaN()},
			History: json.RawMessage(`[1]`), Seconds: 3.25, CodeVersion: "abc", Host: "h1"}
		l0 := mustClaim(t, src, ClaimOptions{Runs: []int64{run.ID}, Worker: "w0"})
		if err := src.Complete(ctx, l0, o); err != nil {
			t.Fatal(err)
		}
		l1 := mustClaim(t, src, ClaimOptions{Runs: []int64{run.ID}, Worker: "w1"})
		if err := src.Fail(ctx, l1, "diverged", 1.5); err != nil {
			t.Fatal(err)
		}
		mustClaim(t, src, ClaimOptions{Runs: []int64{run.ID}, Worker: "w2"}) // cell 2 stays running

		var plain bytes.Buffer
		if err := src.ExportRun(ctx, run.ID, &plain); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(plain.String(), "\n"); lines != 5 {
			t.Fatalf("export has %d lines, want a header and 4 cells:\n%s", lines, plain.String())
		}
		info, err := ReadExportInfo(bytes.NewReader(plain.Bytes()))
		if want := getRun(t, src, run.ID); err != nil || info.Identity != "exp-id" || info.Experiment != "exp" || info.Cells != 4 || !info.Created.Equal(want.Created) {
			t.Errorf("ReadExportInfo = %+v, %v; want the run's identity, experiment, 4 cells and created %v", info, err, want.Created)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(plain.Bytes())
		zw.Close()

		for _, tc := range []struct {
			name string
			data []byte
		}{{"plain", plain.Bytes()}, {"gzip", gz.Bytes()}} {
			dst := openStore(t, filepath.Join(t.TempDir(), tc.name+".db"))
			st, err := dst.ImportRun(ctx, bytes.NewReader(tc.data))
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !st.Created || st.Filled != 2 || st.Kept != 0 || st.Differ != 0 {
				t.Errorf("%s: stats %+v, want created, 2 filled", tc.name, st)
			}
			r := st.Run
			if r.Identity != "exp-id" || r.Experiment != "exp" || string(r.Options) != `{"n":4}` || r.Cells != 4 ||
				r.Done != 1 || r.Failed != 1 || r.Running != 0 || r.CellSeconds != 4.75 {
				t.Errorf("%s: run %+v", tc.name, r)
			}
			if want := getRun(t, src, run.ID).Created; !r.Created.Equal(want) {
				t.Errorf("%s: created %v, want the source's %v", tc.name, r.Created, want)
			}
			cs := cells(t, dst, r.ID)
			c := cs[0]
			if c.Status != Done || c.Worker != "w0" || c.Attempts != 1 || c.Seed != 1000 || string(c.Config) != `{"i":0}` ||
				string(c.Outcome.Output) != string(o.Output) || string(c.Outcome.History) != "[1]" || c.Outcome.Seconds != 3.25 ||
				c.Outcome.CodeVersion != "abc" || c.Outcome.Host != "h1" || c.Outcome.Metrics["acc"] != 0.5 ||
				!math.IsNaN(c.Outcome.Metrics["nan"]) || c.Started.IsZero() || c.Finished.Before(c.Started) {
				t.Errorf("%s: done cell %+v", tc.name, c)
			}
			if c := cs[1]; c.Status != Failed || c.Error != "diverged" || c.Outcome.Seconds != 1.5 {
				t.Errorf("%s: failed cell %+v", tc.name, c)
			}
			for _, i := range []int{2, 3} {
				if c := cs[i]; c.Status != Pending || c.Worker != "" || c.Attempts != 0 || c.Outcome.Output != nil {
					t.Errorf("%s: cell %d %+v, want pending", tc.name, i, c)
				}
			}
			// The imported run is the one a resumed run continues: the next claim is cell 2.
			if l := mustClaim(t, dst, ClaimOptions{Runs: []int64{r.ID}}); l.Index != 2 || l.Seed != 1002 {
				t.Errorf("%s: claimed %d (seed %d), want 2", tc.name, l.Index, l.Seed)
			}
		}

		// Merge: a store that computed cell 3 itself and failed cell 0 differently keeps its own.
		dst := openStore(t, filepath.Join(t.TempDir(), "merge.db"))
		mine := createRun(t, dst, "exp-id", 4)
		var ls []*Lease
		for want := range 4 {
			l := mustClaim(t, dst, ClaimOptions{Runs: []int64{mine.ID}})
			if l.Index != want {
				t.Fatalf("claimed %d, want %d", l.Index, want)
			}
			ls = append(ls, l)
		}
		if err := dst.Fail(ctx, ls[0], "mine", 9); err != nil {
			t.Fatal(err)
		}
		if err := dst.Complete(ctx, ls[3], Outcome{Output: json.RawMessage(`{"mine":true}`), Seconds: 2}); err != nil {
			t.Fatal(err)
		}
		for _, l := range ls[1:3] {
			if err := dst.Release(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		st, err := dst.ImportRun(ctx, bytes.NewReader(plain.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if st.Created || st.Run.ID != mine.ID || st.Filled != 1 || st.Kept != 1 || st.Differ != 1 {
			t.Errorf("merge stats %+v, want run %d, 1 filled (cell 1), 1 kept (cell 0), differing", st, mine.ID)
		}
		cs := cells(t, dst, mine.ID)
		if cs[0].Error != "mine" || cs[1].Error != "diverged" || cs[2].Status != Pending || string(cs[3].Outcome.Output) != `{"mine":true}` {
			t.Errorf("merged cells %+v", cs)
		}

		// A different plan under the same identity is refused, and nothing is written.
		other := openStore(t, filepath.Join(t.TempDir(), "other.db"))
		sp := spec("exp-id", 4)
		sp.Cells[3].Seed = 7
		if _, err := other.CreateRun(ctx, sp); err != nil {
			t.Fatal(err)
		}
		if _, err := other.ImportRun(ctx, bytes.NewReader(plain.Bytes())); err == nil || !strings.Contains(err.Error(), "not the same plan") {
			t.Errorf("import into a different plan: %v, want a plan mismatch", err)
		}
		if cs := cells(t, other, 1); cs[0].Status != Pending || cs[1].Status != Pending {
			t.Errorf("a refused import wrote cells: %+v", cs)
		}

		// A truncated export is an error naming the cause, and leaves no run behind.
		cut := plain.Bytes()[:bytes.LastIndexByte(plain.Bytes()[:plain.Len()-1], '\n')+1]
		empty := openStore(t, filepath.Join(t.TempDir(), "empty.db"))
		if _, err := empty.ImportRun(ctx, bytes.NewReader(cut)); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("truncated export: %v", err)
		}
		if runs, err := empty.Runs(ctx); err != nil || len(runs) != 0 {
			t.Errorf("runs after a refused import: %v %v", runs, err)
		}
	})
}
