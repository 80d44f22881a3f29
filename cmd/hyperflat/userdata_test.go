package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
