package experiments_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	. "github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/store"
)

// smallFreedman is a run of 6 cells of about a second each.
func smallFreedman() Options {
	e, _ := all.Experiments().Lookup("freedman")
	cfg, err := e.Configure(Quick, map[string]string{"methods": "validation,aic,bic", "repeats": "2"})
	if err != nil {
		panic(err)
	}
	return Options{Preset: Quick, Seed: 3, Workers: 1, Config: cfg}
}

// render prints a result's tables as the CLI does, wall times blanked.
func render(t *testing.T, res *Result) string {
	t.Helper()
	return masked(t, res, "table")
}

func openTestStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// cancelAfter is a Monitor that cancels a run after n cells have finished.
type cancelAfter struct {
	mu       sync.Mutex
	n, done  int
	cancel   context.CancelFunc
	finished []string
}

func (c *cancelAfter) Begin(int, int, string, bool) {}
func (c *cancelAfter) Started(int, string)          {}
func (c *cancelAfter) Finished(_ int, key string, _ CellResult, _ float64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.finished = append(c.finished, key)
	}
	c.done++
	if c.done == c.n {
		c.cancel()
	}
}

// TestStoredRunResumeShardsReport is the contract of stored runs: a run stopped midway and
// resumed, a run split into two shards, and a stored run's report all give the tables of an
// uninterrupted in-memory run; the resumed run recomputes none of the finished cells.
func TestStoredRunResumeShardsReport(t *testing.T) {
	e, _ := all.Experiments().Lookup("freedman")
	want, err := e.Run(context.Background(), smallFreedman())
	if err != nil {
		t.Fatal(err)
	}
	wantText := render(t, want)
	if len(want.Table("summary").Rows) != 6 {
		t.Fatalf("summary has %d rows, want 6", len(want.Table("summary").Rows))
	}

	t.Run("cancel and resume", func(t *testing.T) {
		st := openTestStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		mon := &cancelAfter{n: 2, cancel: cancel}
		r := &Runner{Store: st, Monitor: mon}
		_, err := r.Start(ctx, e, smallFreedman(), Mode{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted run: err %v, want context.Canceled", err)
		}
		runs, _ := st.Runs(context.Background())
		if len(runs) != 1 || runs[0].Done != 2 || runs[0].Running != 0 {
			t.Fatalf("after the interruption: %+v, want 2 cells done and none running (the one in flight handed back)", runs)
		}
		r2 := &Runner{Store: st, Workers: 2}
		status, err := r2.Start(context.Background(), e, smallFreedman(), Mode{Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		if status.Computed != 4 || status.Run.ID != runs[0].ID {
			t.Errorf("resume computed %d cells of run %d, want 4 of run %d", status.Computed, status.Run.ID, runs[0].ID)
		}
		if got := render(t, status.Result); got != wantText {
			t.Errorf("resumed run differs from the uninterrupted one:\n%s\nwant:\n%s", got, wantText)
		}
		// A second resume finds nothing to do and returns the same result.
		again, err := (&Runner{Store: st}).Start(context.Background(), e, smallFreedman(), Mode{Resume: true})
		if err != nil || again.Computed != 0 || render(t, again.Result) != wantText {
			t.Errorf("resuming a finished run: computed %d, err %v", again.Computed, err)
		}
		// Without --resume the same options start a new run.
		fresh, err := (&Runner{Store: st}).Start(context.Background(), e, smallFreedman(), Mode{Submit: true})
		if err != nil || fresh.Run.ID == runs[0].ID || fresh.Run.Done != 0 {
			t.Errorf("a run without --resume should be a new run: %+v, %v", fresh, err)
		}
	})

	t.Run("shards", func(t *testing.T) {
		st := openTestStore(t)
		s0, err := (&Runner{Store: st}).Start(context.Background(), e, smallFreedman(), Mode{Shard: 0, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		if s0.Result != nil || s0.Computed != 3 || s0.Run.Done != 3 {
			t.Fatalf("shard 0/2: computed %d, done %d, result %v; want 3, 3, none", s0.Computed, s0.Run.Done, s0.Result != nil)
		}
		s1, err := (&Runner{Store: st}).Start(context.Background(), e, smallFreedman(), Mode{Shard: 1, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		if s1.Result == nil || s1.Computed != 3 || s1.Run.ID != s0.Run.ID {
			t.Fatalf("shard 1/2: computed %d, run %d (shard 0 used %d), result %v", s1.Computed, s1.Run.ID, s0.Run.ID, s1.Result != nil)
		}
		if got := render(t, s1.Result); got != wantText {
			t.Errorf("sharded run differs:\n%s\nwant:\n%s", got, wantText)
		}
	})

	t.Run("report", func(t *testing.T) { checkReport(t, e) })
}

// checkReport: a stored run's report prints what the run printed, in every format, and
// draws its figures from the stored tables.
func checkReport(t *testing.T, e Experiment) {
	st := openTestStore(t)
	status, err := (&Runner{Store: st, Workers: 2}).Start(context.Background(), e, smallFreedman(), Mode{})
	if err != nil {
		t.Fatal(err)
	}
	var printed, reported bytes.Buffer
	if err := status.Result.Write(&printed, "table"); err != nil {
		t.Fatal(err)
	}
	res, _, err := Report(context.Background(), st, all.Experiments(), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Write(&reported, "table"); err != nil {
		t.Fatal(err)
	}
	if printed.String() != reported.String() {
		t.Errorf("report differs from the run's output:\n%s\nrun printed:\n%s", reported.String(), printed.String())
	}
	for _, f := range []string{"json", "csv"} {
		var a, b bytes.Buffer
		status.Result.Write(&a, f)
		res.Write(&b, f)
		if a.String() != b.String() {
			t.Errorf("report --format %s differs from the run's", f)
		}
	}
	dir := t.TempDir()
	paths, err := all.Experiments().Plots(res, dir)
	if err != nil || len(paths) != 6 {
		t.Errorf("plots from the stored run: %v, %v; want 6 PNGs", paths, err)
	}
}

// TestCodeVersionNamesTheBLAS: a stored cell says which BLAS computed it, since the pure-Go
// and OpenBLAS builds sum products in different orders.
func TestCodeVersionNamesTheBLAS(t *testing.T) {
	v := CodeVersion()
	if !strings.HasSuffix(v, " blas="+graph.BLAS) || strings.HasPrefix(v, " ") {
		t.Errorf("CodeVersion() = %q, want a revision then \" blas=%s\"", v, graph.BLAS)
	}
}
