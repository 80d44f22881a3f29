package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// tinyAHSC is the acceptance command's run (ahsc on iris, quick preset, Table 1's six methods)
// with every size cut, so that it takes seconds.
var tinyAHSC = []string{"run", "ahsc", "--dataset", "iris", "--preset", "quick", "--quiet", "--repeats", "2",
	"--budget", "3", "--bayesmark-budget", "3", "--n1", "3", "--n2", "1", "--epochs", "2"}

func checkWidth(t *testing.T, what, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("%s: a line of %d characters: %q", what, n, l)
		}
	}
}

func TestRunPrintsTheHeadlineTablesWithin100Columns(t *testing.T) {
	code, out, errs := runCLI(tinyAHSC...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkWidth(t, "run", out)
	// The answer, then one table (the view, untitled), then the legend and the other tables' names.
	if names := tableNames(out); len(names) != 0 || strings.Count(out, "┌") != 1 || !strings.HasPrefix(out, "On iris (score") {
		t.Errorf("tables printed: %q, want one, under the answer\n%s", names, out)
	}
	if !strings.Contains(out, "more tables: runs, settings") || !strings.Contains(out, "summary") ||
		!strings.Contains(out, "table1") || !strings.Contains(out, "--verbose") || !strings.Contains(out, "\nlegend: ") {
		t.Errorf("the other tables are not named, or no legend:\n%s", out)
	}
	// Headers as written: tablewriter's default would print "N 1" and "MEAN SECONDS".
	if !strings.Contains(out, " evaluations ") || strings.Contains(out, "EVALUATIONS") {
		t.Errorf("headers reformatted:\n%s", out)
	}
	code, verbose, errs := runCLI(append(tinyAHSC, "--verbose")...)
	if code != 0 {
		t.Fatalf("--verbose: exit %d: %s", code, errs)
	}
	checkWidth(t, "run --verbose", verbose)
	want := "runs,settings,bayesmark_reference,summary,runtime,table1"
	if got := strings.Join(tableNames(verbose), ","); got != want {
		t.Errorf("--verbose printed %s, want %s", got, want)
	}
	if !strings.Contains(verbose, " n1 ") || strings.Contains(verbose, "N 1") {
		t.Errorf("settings header reformatted:\n%s", verbose)
	}
}

// tableNames lists the lines that name a table: those followed by a table's top border.
func tableNames(out string) []string {
	lines := strings.Split(out, "\n")
	var names []string
	for i := 0; i+1 < len(lines); i++ {
		if strings.HasPrefix(lines[i+1], "┌") && lines[i] != "" { // "": a wide table's next columns
			names = append(names, lines[i])
		}
	}
	return names
}

func TestMissingDatasetsFailAMultiDatasetRun(t *testing.T) {
	empty := t.TempDir()
	args := []string{"run", "ahsc", "--dataset", "all-tabular", "--data-dir", empty, "--quiet", "--methods", "ahsc",
		"--repeats", "1", "--n1", "3", "--n2", "1", "--epochs", "2"}
	code, out, errs := runCLI(args...)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, out)
	}
	for _, want := range []string{"phoneme", "credit-g", "kc1", "--skip-missing", "hyperflat data fetch"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not mention %s:\n%s", want, errs)
		}
	}
	// --skip-missing alone (no value) runs the embedded sets and notes the others, a line each.
	code, out, errs = runCLI(append(args, "--skip-missing")...)
	if code != 0 {
		t.Fatalf("--skip-missing: exit %d: %s", code, errs)
	}
	checkWidth(t, "--skip-missing", out)
	if n := strings.Count(out, "\nnote: "); n != 8 {
		t.Errorf("%d note lines, want 8 (the OpenML sets):\n%s", n, out)
	}
}

func TestOnlyOwnFlagsAndJSONNumbers(t *testing.T) {
	for _, c := range []struct {
		args  []string
		lease bool
	}{{[]string{"runs"}, false}, {[]string{"report"}, false}, {[]string{"worker"}, true}, {[]string{"run", "freedman"}, true}} {
		_, out, _ := runCLI(append(c.args, "--help")...)
		if strings.Contains(out, "--lease") != c.lease {
			t.Errorf("%v --help: --lease shown %v, want %v", c.args, !c.lease, c.lease)
		}
	}
	dir := t.TempDir()
	run := append(append([]string{"run"}, smallRun...), "--out", dir)
	if code, _, errs := runCLI(run...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	// The same run again: it says that one finished, and how to see or reuse it.
	code, _, errs := runCLI(run...)
	if code != 0 || !strings.Contains(errs, "run 1 in this store finished with the same options") ||
		!strings.Contains(errs, "hyperflat report") || !strings.Contains(errs, "--resume") {
		t.Errorf("second run: exit %d, stderr %q", code, errs)
	}
	code, out, errs := runCLI("runs", "--out", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("runs --format json: %v\n%s", err, out)
	}
	for _, k := range []string{"run", "failed", "running", "wall_time", "cell_seconds"} {
		if _, ok := rows[0][k].(float64); !ok {
			t.Errorf("runs: %s is %#v, want a number", k, rows[0][k])
		}
	}
	if c, ok := rows[0]["cells_done"].(map[string]any); !ok || c["done"] != c["cells"] {
		t.Errorf("runs: cells_done is %#v", rows[0]["cells_done"])
	}
	code, out, _ = runCLI("runs", "--out", dir)
	checkWidth(t, "runs", out)
	if code != 0 || !strings.Contains(out, filepath.Base(dir)) && !strings.Contains(out, "freedman") {
		t.Errorf("runs: exit %d\n%s", code, out)
	}
}

func TestDataListsTheRegistry(t *testing.T) {
	empty := t.TempDir()
	code, out, errs := runCLI("data", "--data-dir", empty, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 18 {
		t.Fatalf("data --format json: %v, %d rows\n%s", err, len(rows), out)
	}
	state := map[string]any{}
	for _, r := range rows {
		state[r["dataset"].(string)] = r["status"]
		if _, ok := r["size"].(float64); !ok || r["source"] == "" || r["licence"] == "" || !strings.HasPrefix(r["path"].(string), empty) {
			t.Errorf("row %v", r)
		}
	}
	if state["mnist"] != "missing" || state["iris"] != "missing (embedded copy used)" {
		t.Errorf("states %v", state)
	}
	code, out, _ = runCLI("data", "--data-dir", empty)
	checkWidth(t, "data", out)
	if code != 0 || !strings.Contains(out, "svhn") || !strings.Contains(out, "data fetch") {
		t.Errorf("data: exit %d\n%s", code, out)
	}
	if code, _, errs := runCLI("data", "fetch", "nosuch"); code != 2 || !strings.Contains(errs, "unknown dataset") {
		t.Errorf("data fetch nosuch: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI("data", "fetch"); code != 2 || !strings.Contains(errs, "name a dataset") {
		t.Errorf("data fetch: exit %d, %s", code, errs)
	}
	// credit-g has no download URL: the command fails, saying where to get it.
	code, _, errs = runCLI("data", "fetch", "credit-g", "--data-dir", empty, "--quiet")
	if code != 1 || !strings.Contains(errs, "Weka") {
		t.Errorf("data fetch credit-g: exit %d, %s", code, errs)
	}
}
