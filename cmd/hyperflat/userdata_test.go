package main

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/search"
)

// writeTextTable writes a CSV whose class is yes or no and whose colour column is a word
// that predicts it, beside two numeric columns.
func writeTextTable(t *testing.T, path string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	b.WriteString("x1,colour,x2,label\n")
	for i := range 90 {
		c := i % 2
		colour := []string{"red", "blue", "green"}[(i/2)%3]
		if c == 1 && i%5 != 0 {
			colour = "blue"
		}
		fmt.Fprintf(&b, "%.4f,%s,%.4f,%s\n", rng.NormFloat64()+float64(c), colour, rng.NormFloat64(), []string{"no", "yes"}[c])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunAhscOnAUsersTextTable is a user's table end to end: text labels and a text column,
// and a file name that is not UTF-8 (which once crashed as the tables were built).
func TestRunAhscOnAUsersTextTable(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"survey.csv", "na\xffme.csv"} {
		path := filepath.Join(dir, name)
		writeTextTable(t, path)
		code, out, errs := runCLI("run", "ahsc", "--data", path, "--target", "label", "--repeats", "1", "--methods", "ahsc",
			"--budget", "2", "--n1", "3", "--n2", "1", "--epochs", "3", "--format", "csv")
		if code != 0 {
			t.Fatalf("%q: exit %d, stderr %s", name, code, errs)
		}
		for _, want := range []string{"classes (sorted): no, yes", "text columns one-hot encoded: colour (3 categories)", "roc-auc"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: the output does not say %q:\n%s", name, want, out)
			}
		}
	}
}

// TestRunAhscInAUsersSpace is the README's `run ahsc --data FILE --target T --space FILE`:
// every configuration stored in the evaluations CSV lies in the given space, and a malformed
// space is a usage error naming its line.
func TestRunAhscInAUsersSpace(t *testing.T) {
	dir := t.TempDir()
	data, space, out := filepath.Join(dir, "survey.csv"), filepath.Join(dir, "space.yaml"), filepath.Join(dir, "out")
	writeTextTable(t, data)
	text := "parameters:\n  - {name: depth, type: int, low: 1, high: 2}\n  - {name: log2_width, type: categorical, choices: [3, 5]}\n" +
		"  - {name: log2_batch_size, type: int, low: 3, high: 4}\n  - {name: log10_learning_rate, type: float, low: -2.5, high: -1.5}\n"
	if err := os.WriteFile(space, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(space string) (int, string, string) {
		return runCLI("run", "ahsc", "--data", data, "--target", "label", "--space", space, "--repeats", "1", "--methods", "ahsc,random",
			"--budget", "3", "--n1", "3", "--n2", "1", "--epochs", "2", "--out", out, "--format", "csv")
	}
	if code, _, errs := run(space); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	sf, err := search.ReadSpaceFile(space)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "evaluations.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 1+1+3 {
		t.Fatalf("evaluations.csv: %d rows, %v; want a header and 4 evaluations", len(rows), err)
	}
	col := slices.Index(rows[0], "config")
	if col < 0 {
		t.Fatalf("evaluations.csv has no config column: %v", rows[0])
	}
	for _, row := range rows[1:] {
		values := map[string]string{}
		for _, kv := range strings.Fields(row[col]) {
			k, v, _ := strings.Cut(kv, "=")
			values[k] = v
		}
		if _, err := ahsc.ParseConfig(sf.Space, values); err != nil {
			t.Errorf("evaluation %q is not in the space: %v", row[col], err)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(text, "high: 4}", "high: 4, scale: log}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(bad); code != 2 || !strings.Contains(errs, "bad.yaml:4: log2_batch_size.scale: unknown key") {
		t.Errorf("a malformed space: exit %d, stderr %q; want a usage error naming line 4", code, errs)
	}
}
