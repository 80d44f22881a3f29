package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestQuickstartRuns runs the program end to end: a trained model, an AHSC search and a
// hypergradient.
func TestQuickstartRuns(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`trained 30 epochs: test accuracy 0\.\d\d`, `AHSC screened 8, trained 2: best width=\d+ lr=`,
		`validation loss \d\.\d+, dC/dλ -?\d`} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", re, out.String())
		}
	}
}

// TestTheREADMEShowsThisProgram keeps the README's library section and this file the same
// program, so that what a reader copies is what this test ran.
func TestTheREADMEShowsThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+string(src)+"```\n") {
		t.Error("README.md's library section is not examples/quickstart/main.go: copy the file into its ```go block")
	}
}
