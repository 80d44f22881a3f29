package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
)

// TestTableC1FromExports is the check that tablec1.md can be rebuilt from a clone: a tiny
// weightdecay run (linear on MNIST under the authors' protocol, 2 replicates, one ζ, 3
// hyper-steps of 4 Adam steps, 200 test images: seconds), exported with export --dir,
// imported into a fresh store that already holds another run (so that the store's run numbers
// differ), must regenerate tablec1.md, its CSVs and its PNGs byte for byte.
func TestTableC1FromExports(t *testing.T) {
	data, err := datasets.SharedDataDir()
	if err != nil {
		t.Skipf("needs MNIST from the shared data directory: %v", err)
	}
	dir := t.TempDir()
	orig, fresh := filepath.Join(dir, "orig.db"), filepath.Join(dir, "fresh.db")
	tiny := []string{"--preset", "quick", "--repeats", "2", "--zetas", "100", "--inner-steps", "4", "--outer-steps", "3",
		"--test-rows", "200", "--data-dir", data, "--quiet"}
	if code, _, errs := runCLI(append([]string{"run", "weightdecay", "--protocol", "authors", "--store", orig}, tiny...)...); code != 0 {
		t.Fatalf("run weightdecay: exit %d: %s", code, errs)
	}
	exports := filepath.Join(dir, "runs")
	if code, _, errs := runCLI("export", "--store", orig, "--dir", exports); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	files, err := filepath.Glob(filepath.Join(exports, "weightdecay-*.jsonl.gz"))
	if err != nil || len(files) != 1 {
		t.Fatalf("export --dir wrote %v (%v), want one weightdecay export", files, err)
	}
	// Another run first, so that the imported run is run 2 in the fresh store, run 1 in the original.
	if code, _, errs := runCLI(append([]string{"run", "weightdecay", "--store", fresh, "--seed", "9"}, tiny...)...); code != 0 {
		t.Fatalf("run weightdecay (the fresh store's own run): exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(append([]string{"import", "--store", fresh}, files...)...); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	// The fresh store's own run is a different seed, a clean one: the authors run reports the
	// pair, the other is listed beside it. Retire it from the comparison by regenerating the
	// original's pages from a store of its exports alone, too.
	alone := filepath.Join(dir, "alone.db")
	if code, _, errs := runCLI(append([]string{"import", "--store", alone}, files...)...); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	// The report reads no dataset (a data directory without MNIST), as tablec1.md says after
	// its command (experiments.RegenerationData(false)).
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, g := range []struct{ store, out string }{{orig, a}, {alone, b}} {
		if code, _, errs := runCLI("report", "--store", g.store, "--data-dir", t.TempDir(), "--markdown", g.out); code != 0 {
			t.Fatalf("report --store %s: exit %d: %s", g.store, code, errs)
		}
	}
	names := []string{"tablec1.md", "tablec1.csv", "tablec1_history.csv", "tablec1_others.csv", "tablec1_fig4_2.png", "tablec1_fig4_3.png"}
	for _, name := range names {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the original store and one rebuilt from its export", name)
		}
	}
	md, _ := os.ReadFile(filepath.Join(a, "tablec1.md"))
	if !strings.Contains(string(md), "`hyperflat import --store tablec1.db docs/reproduction/runs/weightdecay-*.jsonl.gz && hyperflat report --store tablec1.db --markdown docs/reproduction`; do not edit by hand. "+
		experiments.RegenerationData(false)) {
		t.Errorf("tablec1.md does not name the command that rebuilds it from a clone, and what it reads:\n%s", md)
	}
	// In the store holding another run as well, the imported run keeps its name (its identity,
	// not its number): its row reads the same.
	c := filepath.Join(dir, "c")
	if code, _, errs := runCLI("report", "--store", fresh, "--markdown", c); code != 0 {
		t.Fatalf("report --store fresh: exit %d: %s", code, errs)
	}
	mc, _ := os.ReadFile(filepath.Join(c, "tablec1.md"))
	row := func(md []byte) string {
		for _, l := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(l, "| linear / MNIST | authors") {
				return l
			}
		}
		return ""
	}
	if r := row(md); r == "" || row(mc) != r {
		t.Errorf("the authors run's row in a store with another run:\n%s\nwant\n%s", row(mc), r)
	}
}
