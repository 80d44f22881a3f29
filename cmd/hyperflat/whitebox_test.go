package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWhiteboxRoundTrip: a --whitebox run's records come back from an export imported into
// another store: the evaluations table's whitebox_ columns and the selections, as reported
// from either store, are the same.
func TestWhiteboxRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	if code, _, errs := runCLI("run", "ahsc", "--preset", "quick", "--dataset", "iris", "--methods", "random", "--repeats", "1",
		"--whitebox", "--store", src, "--quiet"); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	if code, _, errs := runCLI("export", "--store", src, "--dir", filepath.Join(dir, "ex")); code != 0 {
		t.Fatalf("export: %s", errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ex", "*.jsonl.gz"))
	if code, _, errs := runCLI(append([]string{"import", "--store", dst}, files...)...); code != 0 || len(files) != 1 {
		t.Fatalf("import of %v: %s", files, errs)
	}
	report := func(db string) (evals, selections string) {
		code, out, errs := runCLI("report", "--store", db, "--format", "csv", "--verbose")
		if code != 0 {
			t.Fatalf("report: %s", errs)
		}
		sections := strings.Split(out, "# ")
		for _, s := range sections {
			switch {
			case strings.HasPrefix(s, "evaluations\n"):
				var keep []string
				for _, line := range strings.Split(s, "\n") {
					if i := strings.Index(line, ",param_"); i >= 0 { // the header's parameter columns
						line = line[:i]
					}
					keep = append(keep, strings.Join(strings.Split(line, ",")[:min(30, len(strings.Split(line, ",")))], ","))
				}
				evals = strings.Join(keep, "\n")
			case strings.HasPrefix(s, "selections\n"):
				selections = s
			}
		}
		return evals, selections
	}
	e1, s1 := report(src)
	e2, s2 := report(dst)
	if !strings.Contains(e1, "whitebox_eq7") || strings.Count(e1, "\n") < 10 || s1 == "" {
		t.Fatalf("the run reports no records:\n%s\n%s", e1, s1)
	}
	if e1 != e2 || s1 != s2 {
		t.Errorf("the records changed through export and import:\n%s\n---\n%s", e1, e2)
	}
}
