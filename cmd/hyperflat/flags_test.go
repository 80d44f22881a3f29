package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBadFlags feeds every command malformed, out-of-range and inconsistent flags: each must
// be refused with a message naming the flag and what was expected — exit status 2 for a
// usage error, 1 for a runtime failure (a missing file) — and never a Go panic trace.
func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	iris := []string{"--hidden_layer_sizes=100", "--alpha=0.01", "--batch_size=32", "--learning_rate_init=0.001",
		"--one_minus_beta_1=0.1", "--one_minus_beta_2=0.001", "--epsilon=1e-8"}
	with := func(base []string, extra ...string) []string { return append(append([]string{}, base...), extra...) }
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "freedman", "--seed", "-1"}, 2, "--seed"},
		{[]string{"run", "freedman", "--seed", "1e3"}, 2, "--seed"},
		{[]string{"run", "freedman", "--repeats", "x"}, 2, "--repeats"},
		{[]string{"run", "freedman", "--repeats", "-2"}, 2, "--repeats"},
		{[]string{"run", "freedman", "--workers", "0"}, 2, "--workers"},
		{[]string{"run", "freedman", "--format", "xml"}, 2, "--format"},
		{[]string{"run", "freedman", "--preset", "huge"}, 2, "--preset"},
		{[]string{"run", "freedman", "--methods", "lasso"}, 2, "--methods"},
		{[]string{"run", "freedman", "--methods", ","}, 2, "--methods"},
		{[]string{"run", "freedman", "--chains", "-2"}, 2, "--chains"},
		{[]string{"run", "freedman", "--variant", "other"}, 2, "--variant"},
		{[]string{"run", "freedman", "--bogus"}, 2, "--bogus"},
		{[]string{"run", "freedman", "stray"}, 2, "stray"},
		{[]string{"run", "weightdecay", "--zetas", "a,b"}, 2, "--zetas"},
		{[]string{"run", "weightdecay", "--zetas", "NaN"}, 2, "--zetas"},
		{[]string{"run", "weightdecay", "--zetas", "-1"}, 2, "--zetas"},
		{[]string{"run", "weightdecay", "--zetas", ","}, 2, "--zetas"},
		{[]string{"run", "weightdecay", "--model", "vgg"}, 2, "--model"},
		{[]string{"run", "ahsc", "--budget", "0"}, 2, "--budget"},
		{[]string{"run", "ahsc", "--n1", "abc"}, 2, "--n1"},
		{[]string{"run", "ahsc", "--epochs", "-3"}, 2, "--epochs"},
		{[]string{"run", "ahsc", "--methods", "nope"}, 2, "--methods"},
		{[]string{"run", "ahsc", "--dataset", "nope"}, 2, "--dataset"},
		{[]string{"run", "ahsc", "--target", "y"}, 2, "--target"},
		{[]string{"run", "ahsc", "--metric", "f1"}, 2, "--metric"},
		{[]string{"run", "ahsc", "--data", filepath.Join(dir, "missing.csv")}, 1, "missing.csv"},
		{[]string{"run", "freedman", "--shard", "3/2", "--out", dir}, 2, "--shard"},
		{[]string{"run", "freedman", "--shard", "x", "--out", dir}, 2, "--shard"},
		{[]string{"run", "freedman", "--resume"}, 2, "need a store"},
		{[]string{"run", "freedman", "--submit"}, 2, "need a store"},
		{[]string{"run", "freedman", "--out", dir, "--lease", "1ms"}, 2, "--lease"},
		{[]string{"run", "freedman", "--out", dir, "--lease", "soon"}, 2, "--lease"},
		{[]string{"run", "nope"}, 2, "nope"},
		{[]string{"run", "freedman", "--max-mem", "lots"}, 2, "--max-mem"},
		{[]string{"run", "freedman", "--max-mem", "-5G"}, 2, "--max-mem"},
		{[]string{"run", "freedman", "--max-mem", "12XB"}, 2, "--max-mem"},
		{[]string{"run", "freedman", "--trial-timeout", "-1s"}, 2, "--trial-timeout"},
		{[]string{"run", "freedman", "--trial-timeout", "1 fortnight"}, 2, "--trial-timeout"},
		{[]string{"run"}, 2, "name an experiment"},
		{[]string{"worker"}, 2, "--store"},
		{[]string{"worker", "--store", filepath.Join(dir, "w.db"), "--workers", "0"}, 2, "--workers"},
		{[]string{"worker", "--store", filepath.Join(dir, "w.db"), "--run", "-1"}, 2, "--run"},
		{[]string{"report", "--out", filepath.Join(dir, "none")}, 1, "no store"},
		{[]string{"report"}, 2, "--store"},
		{[]string{"report", "--out", dir, "--format", "yaml"}, 2, "--format"},
		{[]string{"runs"}, 2, "--store"},
		{[]string{"trial", "--dataset", "nope"}, 2, "--dataset"},
		{with([]string{"trial", "--dataset", "iris"}, iris[1:]...), 2, "--hidden_layer_sizes is missing"},
		{with([]string{"trial"}, append(iris, "--alpha=abc")...), 2, "--alpha"},
		{with([]string{"trial"}, append(iris, "--hidden_layer_sizes=5000")...), 2, "--hidden_layer_sizes 5000 is out of range"},
		{with([]string{"trial"}, append(iris, "--epsilon=NaN")...), 2, "--epsilon"},
		{with([]string{"trial"}, append(iris, "--repeat=-1")...), 2, "--repeat"},
		{[]string{"check", "--tol", "-1"}, 2, "--tol"},
		{[]string{"check", "--only", "("}, 2, "--only"},
		{[]string{"list", "--format", "xml"}, 2, "--format"},
		// Counts are bounded by what a run can hold, before anything is allocated.
		{[]string{"run", "ahsc", "--repeats", "300000000000"}, 2, "--repeats 300000000000: want an integer from 1 to 1000"},
		{[]string{"run", "ahsc", "--budget", "99999999"}, 2, "--budget"},
		{[]string{"run", "ahsc", "--n1", "1000000000"}, 2, "--n1"},
		{[]string{"run", "ahsc", "--epochs", "1000000000"}, 2, "--epochs"},
		{[]string{"run", "ahsc", "--folds", "100000"}, 2, "--folds"},
		{[]string{"run", "ahsc", "--tab-rows", "9000000000000"}, 2, "--tab-rows"},
		{[]string{"run", "freedman", "--repeats", "300000000000"}, 2, "--repeats"},
		{[]string{"run", "freedman", "--chains", "1000000000"}, 2, "--chains"},
		{[]string{"run", "freedman", "--features", "90000", "--train-rows", "900000"}, 2, "--features"},
		{[]string{"run", "freedman", "--test-rows", "300000000000"}, 2, "--test-rows"},
		{[]string{"run", "weightdecay", "--repeats", "300000000000"}, 2, "--repeats"},
		{[]string{"run", "weightdecay", "--inner-steps", "300000000000"}, 2, "--inner-steps"},
		{[]string{"run", "weightdecay", "--outer-steps", "300000000000"}, 2, "--outer-steps"},
		{[]string{"run", "weightdecay", "--images", "300000000000"}, 2, "--images"},
		{[]string{"run", "freedman", "--workers", "300000000000"}, 2, "--workers"},
		{[]string{"worker", "--store", filepath.Join(dir, "w.db"), "--workers", "300000000000"}, 2, "--workers"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("hyperflat %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
		if strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine ") {
			t.Errorf("hyperflat %s: a panic reached the user:\n%s", strings.Join(c.args, " "), errs)
		}
	}
}
