package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, want := range []string{"## Protocol authors", "## Protocol clean", "| iris | score |", "(82.98)", "n=2", "Total:", "hyperflat report --out"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("table1.md lacks %q:\n%s", want, md)
		}
	}
	csv, err := os.ReadFile(filepath.Join(docs, "table1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "dataset,protocol,method") {
		t.Errorf("table1.csv: %d lines (want a header and 2 protocols × 2 methods):\n%s", len(lines), csv)
	}
}
