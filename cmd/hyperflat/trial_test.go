package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestPrescan(t *testing.T) {
	got := prescan([]string{"--dataset", "wine", "--protocol=clean", "--alpha=1", "--protocol", "authors", "--preset"}, trialSpaceFlags...)
	want := map[string]string{"dataset": "wine", "protocol": "authors"} // the last wins; a flag without a value is left to the parser
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prescan = %v, want %v", got, want)
	}
}

// TestTrialProtocol checks that --protocol reaches the trial: the authors' protocol searches
// scikit-learn's own Bayesmark space (tol and validation_fraction, β as logits), so each
// protocol refuses the other's parameters, and an authors' trial trains and reports.
func TestTrialProtocol(t *testing.T) {
	clean := []string{"--hidden_layer_sizes=100", "--alpha=0.01", "--batch_size=32", "--learning_rate_init=0.001",
		"--one_minus_beta_1=0.1", "--one_minus_beta_2=0.001", "--epsilon=1e-8"}
	authors := []string{"--hidden_layer_sizes=100", "--alpha=0.01", "--batch_size=32", "--learning_rate_init=0.001",
		"--tol=0.001", "--logit_validation_fraction=0", "--logit_beta_1=2", "--logit_beta_2=5", "--epsilon=1e-8"}
	trial := func(extra []string, hp []string) (int, string, string) {
		return runCLI(append(append([]string{"trial", "--dataset", "iris", "--epochs", "2"}, extra...), hp...)...)
	}
	cases := []struct {
		name  string
		extra []string
		hp    []string
		code  int
		want  string // in stdout for a success, in stderr otherwise
	}{
		{"bad value", []string{"--protocol=bogus"}, clean, 2, `--protocol "bogus"`},
		{"authors refuses the clean space", []string{"--protocol", "authors"}, clean, 2, "unknown flag: --one_minus_beta_1"},
		{"clean refuses the authors' space", []string{"--protocol=clean"}, authors, 2, "unknown flag: --tol"},
		{"authors trains", []string{"--protocol=authors"}, authors, 0, "strong_convexity="},
		{"clean is the default", nil, clean, 0, "objective="},
	}
	for _, c := range cases {
		code, out, errs := trial(c.extra, c.hp)
		where := errs
		if c.code == 0 {
			where = out
		}
		if code != c.code || !strings.Contains(where, c.want) {
			t.Errorf("%s: exit %d (want %d), stdout %q, stderr %q; want %q", c.name, code, c.code, out, errs, c.want)
		}
	}
}
