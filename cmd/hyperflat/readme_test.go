package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestTheREADMEShowsTheFirstCommandsOutput keeps the README's first screen true: the output it
// pastes is what `run ahsc --dataset iris --preset quick` prints, the seconds column aside.
func TestTheREADMEShowsTheFirstCommandsOutput(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const intro = "The first prints, in a few seconds:\n\n```\n"
	_, rest, ok := strings.Cut(string(readme), intro)
	block, _, closed := strings.Cut(rest, "\n```")
	if !ok || !closed {
		t.Fatalf("README.md has no block after %q", intro)
	}
	code, out, errs := runCLI("run", "ahsc", "--dataset", "iris", "--preset", "quick")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Times differ from run to run; the table's last column is the seconds.
	seconds := regexp.MustCompile(`(?m)│[^│]*│$`)
	mask := func(s string) string { return seconds.ReplaceAllString(strings.TrimRight(s, "\n"), "│ … │") }
	if got, want := mask(out), mask(block); got != want {
		t.Errorf("README.md's pasted output is not the command's; paste it again:\n%s", out)
	}
}
