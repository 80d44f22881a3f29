package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegenerationNeedsData checks what the published pages say after their command
// (experiments.RegenerationData): the import of an export whose datasets are missing fails,
// naming the missing file, --data-dir and $HYPERFLAT_DATA (and --no-plan-check, which skips
// the check), and the premise report of the run, imported without the check, fails the same
// way. The export is premise.md's own (australian, a dataset not embedded in the binary).
func TestRegenerationNeedsData(t *testing.T) {
	exports, err := filepath.Glob(filepath.Join("..", "..", "docs", "reproduction", "runs", "premise-*.jsonl.gz"))
	if err != nil || len(exports) == 0 {
		t.Skipf("no premise export in docs/reproduction/runs (%v)", err)
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "grid.db")
	code, _, errs := runCLI("import", "--store", db, "--data-dir", empty, exports[0])
	for _, want := range []string{"australian.tsv.gz not found", "--data-dir", "HYPERFLAT_DATA", "--no-plan-check", "(nothing imported)"} {
		if code != exitFailure || !strings.Contains(errs, want) {
			t.Errorf("import without the data: exit %d, stderr lacks %q:\n%s", code, want, errs)
		}
	}
	if code, _, errs := runCLI("import", "--store", db, "--no-plan-check", exports[0]); code != exitOK {
		t.Fatalf("import --no-plan-check: exit %d: %s", code, errs)
	}
	code, _, errs = runCLI("report", "--store", db, "--data-dir", empty, "--markdown", filepath.Join(dir, "docs"))
	for _, want := range []string{"australian.tsv.gz not found", "--data-dir / HYPERFLAT_DATA"} {
		if code != exitFailure || !strings.Contains(errs, want) {
			t.Errorf("report --markdown without the data: exit %d, stderr lacks %q:\n%s", code, want, errs)
		}
	}
}
