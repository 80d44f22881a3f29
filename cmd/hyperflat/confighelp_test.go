package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
)

// TestHelpShowsTheConfigDefaults: `run NAME --help` and `list --verbose` show every config
// flag with the defaults its struct tags give, in both presets, and the quick and paper
// presets resolve to exactly those values.
func TestHelpShowsTheConfigDefaults(t *testing.T) {
	code, listOut, errs := runCLI("list", "--verbose", "--format", "json")
	if code != 0 {
		t.Fatalf("list --verbose: exit %d: %s", code, errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(listOut), &rows); err != nil {
		t.Fatalf("list --verbose --format json: %v\n%s", err, listOut)
	}
	listed := map[string]string{}
	for _, r := range rows {
		listed[r["experiment"].(string)+" "+r["flag"].(string)] = r["default"].(string)
	}
	for _, e := range all.Experiments() {
		code, help, errs := runCLI("run", e.Name, "--help")
		if code != 0 {
			t.Fatalf("run %s --help: exit %d: %s", e.Name, code, errs)
		}
		help = strings.Join(strings.Fields(help), " ") // the flag table wraps nothing, but spaces vary
		quick, err := e.Resolve(experiments.Options{Preset: experiments.Quick})
		if err != nil {
			t.Fatal(err)
		}
		paper, err := e.Resolve(experiments.Options{Preset: experiments.PaperScale})
		if err != nil {
			t.Fatal(err)
		}
		qv, pv := experiments.FlagValues(quick.Config), experiments.FlagValues(paper.Config)
		for _, f := range e.Fields() {
			want := "[default: " + strings.Join(strings.Fields(f.Defaults()), " ") + "]"
			if !strings.Contains(help, "--"+f.Name+" ") || !strings.Contains(help, want) {
				t.Errorf("run %s --help does not show --%s with %s", e.Name, f.Name, want)
			}
			if got := listed[e.Name+" --"+f.Name]; got != f.Defaults() {
				t.Errorf("list --verbose shows %s --%s default %q, want %q", e.Name, f.Name, got, f.Defaults())
			}
			if f.Derived != "" {
				continue // filled in by Finish from other fields
			}
			if qv[f.Name] != canonical(f.Quick) || pv[f.Name] != canonical(f.Paper) {
				t.Errorf("%s --%s resolves to quick %q, paper %q; its tags say %q, %q", e.Name, f.Name, qv[f.Name], pv[f.Name], f.Quick, f.Paper)
			}
		}
	}
}

// canonical is a tag's default as FlagValues writes it.
func canonical(tag string) string {
	return strings.ReplaceAll(tag, ", ", ",")
}
