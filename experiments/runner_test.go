package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/hyperflat/hyperflat/store"
)

// smallFreedman is a run of 6 cells of about a second each.
func smallFreedman() Options {
	return Options{Preset: Quick, Seed: 3, Repeats: 2, Workers: 1,
		Params: map[string]string{"methods": "validation,aic,bic"}}
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
	e, _ := Lookup("freedman")
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

	t.Run("report", func(t *testing.T) {
		st := openTestStore(t)
		status, err := (&Runner{Store: st, Workers: 2}).Start(context.Background(), e, smallFreedman(), Mode{})
		if err != nil {
			t.Fatal(err)
		}
		var printed, reported bytes.Buffer
		if err := status.Result.Write(&printed, "table"); err != nil {
			t.Fatal(err)
		}
		res, _, err := Report(context.Background(), st, 0, "")
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
		paths, err := Plots(res, dir)
		if err != nil || len(paths) != 6 {
			t.Errorf("plots from the stored run: %v, %v; want 6 PNGs", paths, err)
		}
	})
}

// TestStoredResultRoundTrip checks that every cell type keeps its type and value.
func TestStoredResultRoundTrip(t *testing.T) {
	in := &Result{Experiment: "x", Preset: Quick, Seed: math.MaxUint64, Params: map[string]string{"a": "b"},
		Tables: []Table{{Name: "t", Detail: true, Columns: []string{"i", "u", "f", "g", "nan", "inf", "s", "b", "nil"},
			Rows: [][]any{{3, uint64(math.MaxUint64), 3.0, 0.1, math.NaN(), math.Inf(-1), "NaN", true, nil}}}}}
	b, err := in.MarshalStored()
	if err != nil {
		t.Fatal(err)
	}
	out, err := UnmarshalStoredResult(b)
	if err != nil {
		t.Fatal(err)
	}
	row := out.Tables[0].Rows[0]
	if row[0] != 3 || row[1] != uint64(math.MaxUint64) || row[2] != 3.0 || row[3] != 0.1 || !math.IsNaN(row[4].(float64)) ||
		!math.IsInf(row[5].(float64), -1) || row[6] != "NaN" || row[7] != true || row[8] != nil {
		t.Errorf("round trip: %#v", row)
	}
	if out.Seed != math.MaxUint64 || !out.Tables[0].Detail || out.Params["a"] != "b" {
		t.Errorf("round trip lost fields: %+v", out)
	}
	if !regexp.MustCompile(`"float":"NaN"`).Match(b) {
		t.Errorf("NaN should be tagged: %s", b)
	}
	var f F64
	for _, c := range []struct {
		in   string
		want float64
	}{{`"NaN"`, math.NaN()}, {`"+Inf"`, math.Inf(1)}, {`1.5`, 1.5}, {`null`, math.NaN()}} {
		if err := json.Unmarshal([]byte(c.in), &f); err != nil || !(float64(f) == c.want || math.IsNaN(c.want) && math.IsNaN(float64(f))) {
			t.Errorf("F64 %s: %v %v", c.in, f, err)
		}
	}
}

func TestParseAndFormatBytes(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "2G": 2 << 30, "1.5GiB": 3 << 29, "800MB": 800e6, "1048576": 1 << 20, " 4 k ": 4096} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1G", "0", "NaN", "1e400", "3 apples", "Inf"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}
