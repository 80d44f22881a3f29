package experiments_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	. "github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
)

// masked prints a result's tables in the given format with the wall-time columns (the only
// values two computations of a run may differ in) blanked.
func masked(t *testing.T, res *Result, format string) string {
	t.Helper()
	var b bytes.Buffer
	c := *res
	c.Artifacts = nil
	c.Tables = nil
	for _, tb := range res.Tables {
		cp := tb
		cp.Rows = nil
		for _, row := range tb.Rows {
			r := append([]any(nil), row...)
			for j, col := range tb.Columns {
				switch col {
				case "seconds", "mean_seconds", "mean_seconds_per_run", "ahsc_share":
					r[j] = "<time>"
				}
			}
			cp.Rows = append(cp.Rows, r)
		}
		c.Tables = append(c.Tables, cp)
	}
	if err := c.Write(&b, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDeterminismAudit runs every experiment's quick preset (one repeat, to fit the CI
// budget) three times — 1 worker in memory, 2 workers in memory, 2 workers through a SQLite
// store — and requires identical JSON results, wall times aside.
func TestDeterminismAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs each experiment three times")
	}
	dataDir := datasets.ResolveDir("")
	cases := []struct {
		name   string
		params map[string]string
		needs  string // a data file, relative to the data directory
	}{
		{"freedman", map[string]string{}, ""},
		{"ahsc", map[string]string{"dataset": "iris"}, ""},
		{"weightdecay", map[string]string{"model": "linear", "dataset": "mnist"}, "mnist/train-images-idx3-ubyte.gz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := lookupWithData(t, c.name, dataDir, c.needs)
			c.params["repeats"] = "1"
			cfg, err := e.Configure(Quick, c.params)
			if err != nil {
				t.Fatal(err)
			}
			opt := func(workers int) Options {
				return Options{Preset: Quick, Seed: 7, Workers: workers, DataDir: dataDir, Config: cfg}
			}
			one, err := e.Run(context.Background(), opt(1))
			if err != nil {
				t.Fatal(err)
			}
			two, err := e.Run(context.Background(), opt(2))
			if err != nil {
				t.Fatal(err)
			}
			st := openTestStore(t)
			status, err := (&Runner{Store: st, Workers: 2}).Start(context.Background(), e, opt(2), Mode{})
			if err != nil {
				t.Fatal(err)
			}
			want := masked(t, one, "json")
			if got := masked(t, two, "json"); got != want {
				t.Errorf("2 workers differ from 1:\n%s\nwant\n%s", got, want)
			}
			if got := masked(t, status.Result, "json"); got != want {
				t.Errorf("the stored run differs from the in-memory one:\n%s\nwant\n%s", got, want)
			}
			if one.Table("summary") == nil || len(one.Table("summary").Rows) == 0 {
				t.Error("empty summary")
			}
			// The stored result draws its figures without the run's internals.
			paths, err := all.Experiments().Plots(status.Result, t.TempDir())
			if err != nil || len(paths) == 0 {
				t.Errorf("figures of the stored result: %v, %v", paths, err)
			}
			for _, p := range paths {
				if fi, err := os.Stat(p); err != nil || fi.Size() < 1000 {
					t.Errorf("figure %s: %v", p, err)
				}
			}
		})
	}
}

// lookupWithData returns the named experiment, skipping the test when needs (a data file
// relative to dataDir; "" for none) is absent.
func lookupWithData(t *testing.T, name, dataDir, needs string) Experiment {
	t.Helper()
	if needs != "" {
		if _, err := os.Stat(filepath.Join(dataDir, needs)); err != nil {
			t.Skipf("needs %s under the data directory %q (set %s): %v", needs, dataDir, datasets.EnvDataDir, err)
		}
	}
	e, err := all.Experiments().Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
