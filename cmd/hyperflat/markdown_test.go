package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/experiments"

	"github.com/hyperflat/hyperflat/datasets"
)

// TestReportMarkdown runs the Table 1 generator on a tiny stored run: two protocols of
// iris, two methods, two repeats, and checks the files it writes.
func TestReportMarkdown(t *testing.T) {
	dir := t.TempDir()
	for _, proto := range []string{"clean", "authors"} {
		code, _, errs := runCLI("run", "ahsc", "--dataset", "iris", "--preset", "quick", "--repeats", "2", "--methods", "ahsc,random",
			"--bayesmark-budget", "4", "--n1", "4", "--n2", "2", "--epochs", "3", "--folds", "2", "--protocol", proto, "--out", dir, "--quiet")
		if code != 0 {
			t.Fatalf("run --protocol %s: exit %d: %s", proto, code, errs)
		}
	}
	docs := filepath.Join(dir, "docs")
	code, out, errs := runCLI("report", "--out", dir, "--markdown", docs)
	if code != 0 {
		t.Fatalf("report --markdown: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "from 2 runs") {
		t.Errorf("stdout %q", out)
	}
	md, err := os.ReadFile(filepath.Join(docs, "table1.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Protocol authors", "## Protocol clean", "| iris | score |", "(82.98)", "n=2", "Total:", "hyperflat report --out",
		"](figure2_iris_authors.png)", "](figure2_iris_clean.png)", "| `" + experiments.CodeVersion() + "` |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("table1.md lacks %q:\n%s", want, md)
		}
	}
	// each run's computing time, the union of its cells' spans read from the store
	if rows := regexp.MustCompile(`(?m)^\| [12] \| (clean|authors) \| quick \| iris \| hat \| model (?:sklearn|hyperflat); methods ahsc,random \| ([^|]+) \|`).FindAllStringSubmatch(string(md), -1); len(rows) != 2 {
		t.Errorf("table1.md's runs table: %q, want 2 runs", rows)
	} else {
		for _, r := range rows {
			// (the tiny run's cells take under a second: rounded, 0s; without spans, –)
			if d, err := time.ParseDuration(strings.TrimSpace(r[2])); err != nil || d < 0 {
				t.Errorf("run %s: computing %q, want a duration read from its cells' spans", r[1], r[2])
			}
		}
	}
	for _, f := range []string{"figure2_iris_authors.png", "figure2_iris_clean.png"} { // Figure 2, linked above
		if _, err := os.Stat(filepath.Join(docs, f)); err != nil {
			t.Error(err)
		}
	}
	csv, err := os.ReadFile(filepath.Join(docs, "table1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "dataset,protocol,method") {
		t.Errorf("table1.csv: %d lines (want a header and 2 protocols × 2 methods):\n%s", len(lines), csv)
	}
	// the authors' parser statistic is of OpenML runs only: iris writes no table1_parser.csv
	if _, err := os.Stat(filepath.Join(docs, "table1_parser.csv")); !os.IsNotExist(err) {
		t.Errorf("table1_parser.csv for a Bayesmark-only store (%v)", err)
	}

	checkExportImport(t, dir, docs)
	checkAuthorsOutputs(t, dir, docs) // last: it rewrites table1.md
}

// checkAuthorsOutputs puts a hand-made authors_bayesmark.csv beside the pages: report
// --markdown then adds its section to table1.md, and refuses a malformed one, naming it.
func checkAuthorsOutputs(t *testing.T, dir, docs string) {
	t.Helper()
	const head = "source,dataset,method,studies,calls_min,calls_max,mean,ci_low,ci_high,source_commit,eval_path,baseline_path,baseline,baseline_diff,resamples,seed\n"
	path := filepath.Join(docs, "authors_bayesmark.csv")
	csv := head + "r/iris_min,iris,stcvx,20,15,15,90.99,89.3,92.61,aaaaaaa111,r/iris_min/derived/eval.json,,stored,0,10000,1\n" +
		"r/iris_min,iris,random,20,15,15,88.34,86.36,90.19,aaaaaaa111,r/iris_min/derived/eval.json,,stored,0,10000,1\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	if code, _, errs := runCLI("report", "--out", dir, "--markdown", docs); code != 0 {
		t.Fatalf("report --markdown with authors_bayesmark.csv: exit %d: %s", code, errs)
	}
	md, err := os.ReadFile(filepath.Join(docs, "table1.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| iris | 91.00 | 90.99 [89.30, 92.61] | 88.34 [86.36, 90.19] |"; !strings.Contains(string(md), want) {
		t.Errorf("table1.md lacks the authors' outputs row %q", want)
	}
	if err := os.WriteFile(path, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("report", "--out", dir, "--markdown", docs); code == 0 || !strings.Contains(errs, "authors_bayesmark.csv") {
		t.Errorf("a CSV without rows: exit %d, stderr %q; want a failure naming the file", code, errs)
	}
}

// checkExportImport checks that the runs of the store in dir, exported and imported into a
// fresh store, regenerate the tables report --markdown wrote into docs, and that an unchanged
// run exports to the same bytes.
func checkExportImport(t *testing.T, dir, docs string) {
	t.Helper()
	runsDir := filepath.Join(docs, "runs")
	if code, out, errs := runCLI("export", "--out", dir, "--dir", runsDir); code != 0 || strings.Count(out, "\n") != 2 {
		t.Fatalf("export --dir: exit %d: %s%s", code, out, errs)
	}
	exports, err := filepath.Glob(filepath.Join(runsDir, "ahsc-*.jsonl.gz"))
	if err != nil || len(exports) != 2 {
		t.Fatalf("exports %v (%v), want one per run", exports, err)
	}
	first, err := os.ReadFile(exports[0])
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("export", "--out", dir, "--dir", runsDir); code != 0 {
		t.Fatalf("second export: exit %d: %s", code, errs)
	}
	if again, err := os.ReadFile(exports[0]); err != nil || string(again) != string(first) {
		t.Errorf("re-exporting an unchanged run changed %s (%v)", exports[0], err)
	}
	// In either order on the command line the runs are imported in the order they were
	// created, so the report picks the same runs (the latest of each kind) with the same IDs.
	reversed := slices.Clone(exports)
	slices.Reverse(reversed)
	for i, order := range [][]string{exports, reversed} {
		fresh := filepath.Join(t.TempDir(), "fresh.db")
		code, out, errs := runCLI(append([]string{"import", "--store", fresh}, order...)...)
		if code != 0 || strings.Count(out, "created run") != 2 {
			t.Fatalf("import: exit %d: %s%s", code, out, errs)
		}
		// every imported cell is done, but no process assembled the runs' results here
		if code, list, errs := runCLI("runs", "--store", fresh, "--format", "csv"); code != 0 || strings.Count(list, ",unassembled,") != 2 {
			t.Errorf("runs of the imported store: exit %d: %s%s, want 2 unassembled runs", code, list, errs)
		}
		docs2 := filepath.Join(dir, fmt.Sprintf("docs%d", i))
		if code, _, errs := runCLI("report", "--store", fresh, "--markdown", docs2); code != 0 {
			t.Fatalf("report from the imported store: exit %d: %s", code, errs)
		}
		for _, f := range []string{"table1.csv", "table1.md"} {
			a, errA := os.ReadFile(filepath.Join(docs, f))
			b, errB := os.ReadFile(filepath.Join(docs2, f))
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			// Only the command line in the header names a different store.
			got := strings.Replace(string(b), "report --store "+fresh, "report --out "+dir, 1)
			want := strings.Replace(string(a), "--markdown "+docs, "--markdown "+docs2, 1)
			if got != want {
				t.Errorf("%s differs after export and import (order %d):\n--- original\n%s\n--- imported\n%s", f, i, want, got)
			}
		}
	}
}

// TestReportMarkdownTableC1 runs the Table C.1 generator on a tiny stored weightdecay run
// (linear on MNIST, 2 replicates, one ζ, 3 hyper-steps of 5 Adam steps) and checks the files
// it writes: six rows, the five pairs not run listed as such, the CSVs and the figures.
func TestReportMarkdownTableC1(t *testing.T) {
	data, err := datasets.SharedDataDir()
	if err != nil {
		t.Skipf("needs MNIST from the shared data directory: %v", err)
	}
	dir := t.TempDir()
	code, _, errs := runCLI("run", "weightdecay", "--preset", "quick", "--repeats", "2", "--zetas", "100", "--inner-steps", "5",
		"--outer-steps", "3", "--test-rows", "200", "--data-dir", data, "--out", dir, "--quiet")
	if code != 0 {
		t.Fatalf("run weightdecay: exit %d: %s", code, errs)
	}
	docs := filepath.Join(dir, "docs")
	code, out, errs := runCLI("report", "--out", dir, "--markdown", docs)
	if code != 0 {
		t.Fatalf("report --markdown: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "from 1 weightdecay runs (1 of 6 pairs measured)") || strings.Contains(out, "table1.md") {
		t.Errorf("stdout %q", out)
	}
	md, err := os.ReadFile(filepath.Join(docs, "tablec1.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(md), "| not yet run |"); n != 5 {
		t.Errorf("tablec1.md lists %d pairs as not yet run, want 5:\n%s", n, md)
	}
	for _, want := range []string{"| linear / MNIST | clean, offline; 5 × 3 steps; η 0.001; 200 test images; ζ grid 100 | 0.", "(ζ 100 100; the grid's only ζ: not bracketed)", "2 of 2 (run ",
		"min-norm, final-model selection", "improves final test accuracy by 12%", "## Verdict", "`hyperflat import --store tablec1.db docs/reproduction/runs/weightdecay-*.jsonl.gz && ", "| linear / MNIST | quick | clean, offline | – | 5 × 3 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("tablec1.md lacks %q:\n%s", want, md)
		}
	}
	csv, err := os.ReadFile(filepath.Join(docs, "tablec1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(lines) != 7 || !strings.HasPrefix(lines[0], "model,dataset,status") {
		t.Errorf("tablec1.csv: %d lines (want a header and 6 pairs):\n%s", len(lines), csv)
	}
	for _, f := range []string{"tablec1_history.csv", "tablec1_others.csv", "tablec1_fig4_2.png", "tablec1_fig4_3.png"} {
		if fi, err := os.Stat(filepath.Join(docs, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestMarkdownCommand checks the command a published page names: the import of its exports
// and the report on that store where the directory holds exports (without the author's
// --data-dir, which the import half never had: both find the data as the page's
// experiments.RegenerationData says), the command as given elsewhere.
func TestMarkdownCommand(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--store", "/somewhere/grid.db", "--data-dir", "/data", "--markdown", dir}
	if got, want := markdownCommand(args, dir), "hyperflat report --store /somewhere/grid.db --data-dir /data --markdown "+dir; got != want {
		t.Errorf("without exports: %q, want %q", got, want)
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runs", "ahsc-1.jsonl.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := "hyperflat import --store grid.db " + filepath.Join(dir, "runs", "*.jsonl.gz") +
		" && hyperflat report --store grid.db --markdown " + dir
	for _, a := range [][]string{args, {"--store=/x.db", "--data-dir", "/data", "--markdown", dir}, {"--out", "/o", "--data-dir=/data", "--markdown", dir}} {
		if got := markdownCommand(a, dir); got != want {
			t.Errorf("%v: %q, want %q", a, got, want)
		}
	}
}

// TestReplaceGeneratedBlock checks that only the marked block of a hand-written page is
// rewritten, that rewriting it again changes nothing, and that a page without one pair of
// markers is an error and left as it was.
func TestReplaceGeneratedBlock(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "page.md")
	page := "# Title\n\n" + generatedBegin + "\n\nold verdict\n\n" + generatedEnd + "\n\nHand-written.\n"
	if err := os.WriteFile(p, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := replaceGeneratedBlock(p, "new verdict\n")
	if err != nil || !changed {
		t.Fatalf("changed %v, %v", changed, err)
	}
	b, _ := os.ReadFile(p)
	if want := "# Title\n\n" + generatedBegin + "\n\nnew verdict\n\n" + generatedEnd + "\n\nHand-written.\n"; string(b) != want {
		t.Errorf("page:\n%s\nwant:\n%s", b, want)
	}
	if changed, err := replaceGeneratedBlock(p, "new verdict"); err != nil || changed {
		t.Errorf("the same verdict again: changed %v, %v", changed, err)
	}
	for _, bad := range []string{"# no markers\n", generatedEnd + "\n" + generatedBegin + "\n", generatedBegin + generatedEnd + generatedBegin + generatedEnd} {
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := replaceGeneratedBlock(p, "v"); err == nil {
			t.Errorf("%q: no error", bad)
		}
		if b, _ := os.ReadFile(p); string(b) != bad {
			t.Errorf("%q rewritten to %q", bad, b)
		}
	}
}
