package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/internal/textable"
)

// answerCase is one command of the acceptance test: its arguments, whether it is a run
// (whose first line must be the answer sentence) and whether it must mark no cell.
type answerCase struct {
	name    string
	args    []string
	run     bool
	noMarks bool
	shared  bool // needs the shared data directory (MNIST, the OpenML sets)
}

// answerCases are every experiment's quick preset, cut to seconds, and the commands that
// print tables. dir is a store the runs command lists; data the shared data directory.
func answerCases(dir, data string) []answerCase {
	tiny := []string{"--quiet", "--repeats", "1", "--budget", "3", "--bayesmark-budget", "3", "--n1", "3", "--n2", "1", "--epochs", "2"}
	return []answerCase{
		{name: "ahsc", args: tinyAHSC, run: true},
		{name: "ahsc all-tabular, 1 repeat", args: append([]string{"run", "ahsc", "--dataset", "all-tabular", "--methods", "ahsc,random",
			"--tab-rows", "100", "--data-dir", data}, tiny...), run: true, noMarks: true, shared: true},
		{name: "freedman", args: []string{"run", "freedman", "--quiet", "--validation-steps", "3", "--pac-bayes-steps", "2",
			"--baseline-steps", "3", "--chains", "4", "--langevin-steps", "3", "--features", "20", "--train-rows", "30",
			"--validation-rows", "30", "--test-rows", "30", "--folds", "3", "--out", dir}, run: true},
		{name: "premise", args: []string{"run", "premise", "--quiet", "--datasets", "iris", "--configs", "2", "--epochs", "2",
			"--probes", "2", "--lanczos", "3"}, run: true},
		{name: "weightdecay", args: []string{"run", "weightdecay", "--quiet", "--zetas", "10", "--repeats", "2", "--inner-steps", "2",
			"--outer-steps", "2", "--test-rows", "20", "--data-dir", data}, run: true, shared: true},
		{name: "data", args: []string{"data"}},
		{name: "runs", args: []string{"runs", "--out", dir}},
		{name: "report", args: []string{"report", "--out", dir}, run: true},
		{name: "ahsc --verbose", args: append(slices.Clone(tinyAHSC), "--verbose"), run: true}, // split tables keep their keys
		{name: "list", args: []string{"list"}},
		{name: "check", args: []string{"check", "--only", "^MatMul$"}},
	}
}

// TestEveryCommandAnswersFirstWithinTheWidth is issue 50's acceptance: no output line over
// 100 characters, no table row without its key column, and a run's first line the answer.
func TestEveryCommandAnswersFirstWithinTheWidth(t *testing.T) {
	data, shareErr := datasets.SharedDataDir()
	dir := t.TempDir()
	for _, c := range answerCases(dir, data) {
		t.Run(c.name, func(t *testing.T) {
			if c.shared && shareErr != nil {
				t.Skipf("needs the shared data directory: %v", shareErr)
			}
			code, out, errs := runCLI(c.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			checkWidth(t, c.name, out)
			checkKeys(t, out)
			if c.run {
				checkAnswer(t, out)
			}
			if c.noMarks && strings.Contains(out, "*") {
				t.Errorf("a cell is marked at n = 1:\n%s", out)
			}
		})
	}
}

// checkAnswer checks that the output opens with the answer: a sentence (capitalized, ending
// in a full stop before the first blank line) that names what ranks first.
func checkAnswer(t *testing.T, out string) {
	t.Helper()
	para, _, _ := strings.Cut(out, "\n\n")
	first, _ := utf8.DecodeRuneInString(para)
	if !unicode.IsUpper(first) || !strings.HasSuffix(para, ".") || !strings.Contains(para, " first (") {
		t.Errorf("the first line is not the answer sentence:\n%s", out)
	}
}

// checkKeys checks every boxed table: its first row starts with a key, no row line has an
// empty key beside a full set of values (a row without its key), and a table drawn right
// after another (a wide one's further columns) starts with all the key columns of the first
// (as many as textable.Keys finds: dataset and method for a row per dataset × method).
func checkKeys(t *testing.T, out string) {
	t.Helper()
	for _, p := range keyProblems(out) {
		t.Errorf("%s:\n%s", p, out)
	}
}

func keyProblems(out string) []string {
	var problems []string
	lines := strings.Split(out, "\n")
	var prevHeader []string
	var prevRows [][]string
	prevEnd := -2
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "┌") || i+1 >= len(lines) {
			continue
		}
		header := trimmed(cells(lines[i+1]))
		if i > 0 && i == prevEnd+2 && lines[i-1] == "" {
			k := textable.Keys(prevHeader, prevRows)
			if len(header) < k || !slices.Equal(header[:k], prevHeader[:k]) {
				problems = append(problems, fmt.Sprintf("a table continues another without its key columns %v", prevHeader[:k]))
			}
		}
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "├"); i++ { // the header, wrapped or not
		}
		var rows [][]string
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "└"); i++ {
			if !strings.HasPrefix(lines[i], "│") {
				continue
			}
			cs := trimmed(cells(lines[i]))
			empty := 0
			for _, c := range cs[1:] {
				if c == "" {
					empty++
				}
			}
			if cs[0] == "" && (len(rows) == 0 || (empty == 0 && len(cs) > 2)) {
				problems = append(problems, fmt.Sprintf("a row without its key: %q", lines[i]))
			}
			if cs[0] != "" {
				rows = append(rows, cs)
			}
		}
		prevHeader, prevRows, prevEnd = header, rows, i
	}
	return problems
}

// TestKeyProblemsFindsASplitRow checks the check on the output issue 50 reported: summary
// split in two, the second part without the method column.
func TestKeyProblemsFindsASplitRow(t *testing.T) {
	split := `summary
┌─────────┬────────┬────────┐
│ dataset │ method │ median │
├─────────┼────────┼────────┤
│ iris    │ ahsc   │ 10.706 │
│ iris    │ random │ 42.495 │
└─────────┴────────┴────────┘

┌─────────┬─────────┐
│ dataset │ seconds │
├─────────┼─────────┤
│ iris    │ 0.0599  │
│ iris    │ 0.1034  │
└─────────┴─────────┘
`
	if p := keyProblems(split); len(p) != 1 {
		t.Errorf("split table: problems %q, want one", p)
	}
	whole := split[:strings.Index(split, "\n\n")+1]
	if p := keyProblems(whole); len(p) != 0 {
		t.Errorf("one table: problems %q", p)
	}
	if p := keyProblems(strings.Replace(whole, "│ iris    │ random", "│         │ random", 1)); len(p) != 1 {
		t.Errorf("a row without its key: problems %q, want one", p)
	}
}

func trimmed(cs []string) []string {
	for i, c := range cs {
		cs[i] = strings.TrimSpace(c)
	}
	return cs
}

func cells(line string) []string {
	return strings.Split(strings.Trim(line, "│"), "│")
}
