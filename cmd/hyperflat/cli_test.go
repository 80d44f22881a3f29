package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUnknownCommandExits2WithUsageOnStderr(t *testing.T) {
	code, out, errs := runCLI("frobnicate")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if out != "" || !strings.Contains(errs, `unknown command "frobnicate"`) || !strings.Contains(errs, "Usage: hyperflat") {
		t.Errorf("stdout %q, stderr %q", out, errs)
	}
}

func TestNoCommandExits2(t *testing.T) {
	if code, _, errs := runCLI(); code != 2 || !strings.Contains(errs, "Usage") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestUnknownFlagExits2(t *testing.T) {
	for _, cmd := range []string{"version", "list", "check"} {
		code, out, errs := runCLI(cmd, "--bogus")
		if code != 2 || out != "" || !strings.Contains(errs, "unknown flag: --bogus") || !strings.Contains(errs, "Usage: hyperflat "+cmd) {
			t.Errorf("%s --bogus: exit %d, stdout %q, stderr %q", cmd, code, out, errs)
		}
	}
	if code, _, errs := runCLI("check", "--format", "xml"); code != 2 || !strings.Contains(errs, "--format") {
		t.Errorf("check --format xml: exit %d, stderr %q", code, errs)
	}
}

func TestHelpOnEveryCommand(t *testing.T) {
	if code, out, _ := runCLI("--help"); code != 0 || !strings.Contains(out, "check") {
		t.Errorf("--help: exit %d, stdout %q", code, out)
	}
	for _, c := range commands() {
		code, out, errs := runCLI(c.name, "--help")
		if code != 0 || !strings.Contains(out, "Usage: hyperflat "+c.name) || errs != "" {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", c.name, code, out, errs)
		}
		// pflag's internals are not for users: a list flag reads "IDs", not "int64Slice (default [])".
		if strings.Contains(out, "Slice") || strings.Contains(out, "(default [])") {
			t.Errorf("%s --help shows a pflag type or an empty list default:\n%s", c.name, out)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI("version")
	if code != 0 || !strings.HasPrefix(out, "hyperflat ") || !strings.Contains(out, "gorgonia") || !strings.Contains(out, "blas ") || !strings.Contains(out, "\ngc GOGC=") ||
		!strings.Contains(out, "\nbuild "+experiments.CodeVersion()+"\n") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

func TestCheckPrintsEveryOpAndPasses(t *testing.T) {
	code, out, errs := runCLI("check")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, op := range []string{"MatMul", "Conv2d (pad 1)", "MaxPool2d", "BatchNorm (train, 4-D)", "Softmax", "Dropout", "Slice"} {
		if !strings.Contains(out, op) {
			t.Errorf("table lacks %s:\n%s", op, out)
		}
	}
	if strings.Contains(out, "FAIL") || !strings.Contains(out, "ops pass") {
		t.Errorf("table:\n%s", out)
	}
}

func TestCheckJSONAndFailureExit(t *testing.T) {
	code, out, _ := runCLI("check", "--only", "^Tanh$", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0]["op"] != "Tanh" || rows[0]["result"] != "pass" {
		t.Fatalf("json %q: %v", out, err)
	}
	if _, ok := rows[0]["1st_order_max_rel_err"].(float64); !ok {
		t.Errorf("the relative error is %#v in JSON, want a number", rows[0]["1st_order_max_rel_err"])
	}
	// A step far too large makes finite differences disagree: the command must say so and exit 1.
	code, out, _ = runCLI("check", "--only", "^Exp$", "--step", "0.5")
	if code != 1 || !strings.Contains(out, "FAIL") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if code, _, errs := runCLI("check", "--only", "nosuchop"); code != 2 || !strings.Contains(errs, "no op matches") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestListFormats(t *testing.T) {
	code, out, _ := runCLI("list", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "Name,Paper,Flags,Description") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

func TestRunContract(t *testing.T) {
	if code, _, errs := runCLI("run"); code != 2 || !strings.Contains(errs, "name an experiment") {
		t.Errorf("run without a name: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI("run", "nosuch"); code != 2 || !strings.Contains(errs, "no experiment named") {
		t.Errorf("unknown experiment: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI("run", "weightdecay", "--model", "vgg"); code != 2 || !strings.Contains(errs, "--model") {
		t.Errorf("bad choice: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI("run", "weightdecay", "--preset", "huge"); code != 2 || !strings.Contains(errs, "preset") {
		t.Errorf("bad preset: exit %d, stderr %q", code, errs)
	}
	dir := t.TempDir()
	code, out, errs := runCLI("run", "weightdecay", "--data-dir", dir)
	if code != 1 || out != "" || !strings.Contains(errs, "mnist") || !strings.Contains(errs, dir) {
		t.Errorf("missing data: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, _ := runCLI("run", "weightdecay", "--help"); code != 0 || !strings.Contains(out, "--dataset") || !strings.Contains(out, "--zetas") {
		t.Errorf("run weightdecay --help: exit %d, stdout %q", code, out)
	}
}
