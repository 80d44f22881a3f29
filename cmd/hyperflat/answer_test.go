package main

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/hyperflat/hyperflat/datasets"
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
// after another (a wide one's further columns) starts with the same key column.
func checkKeys(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	prevKey, prevEnd := "", -2
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "┌") || i+1 >= len(lines) {
			continue
		}
		key := strings.TrimSpace(cells(lines[i+1])[0])
		if i > 0 && i == prevEnd+2 && lines[i-1] == "" && key != prevKey {
			t.Errorf("a table continues another without its key column %q:\n%s", prevKey, out)
		}
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "├"); i++ { // the header, wrapped or not
		}
		first := true
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "└"); i++ {
			if !strings.HasPrefix(lines[i], "│") {
				continue
			}
			cs := cells(lines[i])
			empty := 0
			for _, c := range cs[1:] {
				if strings.TrimSpace(c) == "" {
					empty++
				}
			}
			if strings.TrimSpace(cs[0]) == "" && (first || (empty == 0 && len(cs) > 2)) {
				t.Errorf("a row without its key: %q", lines[i])
			}
			first = false
		}
		prevKey, prevEnd = key, i
	}
}

func cells(line string) []string {
	return strings.Split(strings.Trim(line, "│"), "│")
}
