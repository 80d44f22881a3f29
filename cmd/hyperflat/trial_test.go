package main

import (
	"os"
	"path/filepath"
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
		{"whitebox records", []string{"--whitebox", "--whitebox-stride=1"}, clean, 0, "whitebox_stride=1\n"},
		{"whitebox's eq7", []string{"--whitebox"}, clean, 0, "whitebox_eq7="},
		{"whitebox settings need it", []string{"--whitebox-probes=4"}, clean, 2, "--whitebox-probes applies with --whitebox"},
		{"whitebox settings are checked", []string{"--whitebox", "--whitebox-probes=1"}, clean, 2, "1 Hutchinson probes"},
		{"the authors' Bayesmark refit validates on its training rows: no regularizer", []string{"--protocol=authors", "--whitebox"}, authors, 0, "whitebox_iterates=0\n"},
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

// TestTrialSpace: --space gives a trial its parameter flags and their ranges (here a
// Bayesmark MLP's space with fixed Adam constants), and a malformed space is a usage error
// naming its line.
func TestTrialSpace(t *testing.T) {
	dir := t.TempDir()
	space := filepath.Join(dir, "space.json")
	text := `{"parameters": [
  {"name": "hidden_layer_sizes", "type": "int", "low": 8, "high": 32},
  {"name": "alpha", "type": "float", "low": 1e-5, "high": 1e-1, "log": true},
  {"name": "batch_size", "type": "categorical", "choices": [16, 32]},
  {"name": "learning_rate_init", "type": "float", "low": 1e-3, "high": 1e-1, "log": true},
  {"name": "one_minus_beta_1", "type": "categorical", "choices": [0.1]},
  {"name": "one_minus_beta_2", "type": "categorical", "choices": [0.001]},
  {"name": "epsilon", "type": "categorical", "choices": [1e-8]}]}`
	bad := filepath.Join(dir, "bad.json")
	if os.WriteFile(space, []byte(text), 0o644) != nil || os.WriteFile(bad, []byte(strings.Replace(text, `"log": true}`, `"log": true, "step": 2}`, 1)), 0o644) != nil {
		t.Fatal("cannot write the space files")
	}
	hp := []string{"--hidden_layer_sizes=10", "--alpha=0.001", "--batch_size=16", "--learning_rate_init=0.01",
		"--one_minus_beta_1=0.1", "--one_minus_beta_2=0.001", "--epsilon=1e-8"}
	trial := func(file string, hp ...string) (int, string, string) {
		return runCLI(append([]string{"trial", "--dataset", "iris", "--epochs", "2", "--space", file}, hp...)...)
	}
	if code, out, errs := trial(space, hp...); code != 0 || !strings.Contains(out, "objective=") {
		t.Errorf("a trial in the space: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := trial(space, append(hp, "--batch_size=64")...); code != 2 || !strings.Contains(errs, `--batch_size "64": want one of 16, 32`) {
		t.Errorf("a batch size outside the space's choices: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := trial(bad, hp...); code != 2 || !strings.Contains(errs, "bad.json:3: alpha.step: unknown key") {
		t.Errorf("a space with an unknown key: exit %d, stderr %q", code, errs)
	}
	if code, out, _ := trial(space, "--help"); code != 0 || !strings.Contains(out, "--one_minus_beta_1") || !strings.Contains(out, "one of 16, 32") {
		t.Errorf("trial --space FILE --help: exit %d, does not list the space's flags:\n%s", code, out)
	}
}
