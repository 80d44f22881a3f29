// Package experimenttest checks what every experiment's typed configuration must satisfy:
// documented flags with defaults in both presets, identities that tell any two configurations
// apart, and a stored form that a worker decodes back to the same configuration.
package experimenttest

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/store"
)

// CheckConfig checks e's config type: every flag has a usage text; both presets' defaults
// finish without error (Finish may read nothing but the config); and changing any single
// field of the quick preset's configuration changes the run's identity.
func CheckConfig(t *testing.T, e experiments.Experiment) {
	t.Helper()
	fields, err := experiments.Fields(e.NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) == 0 {
		t.Fatalf("%s: config has no flags", e.Name)
	}
	for _, f := range fields {
		if f.Usage == "" {
			t.Errorf("%s: --%s has no usage text", e.Name, f.Name)
		}
	}
	for _, preset := range []string{experiments.Quick, experiments.PaperScale} {
		if _, err := e.Resolve(experiments.Options{Preset: preset}); err != nil {
			t.Errorf("%s: the %s preset's defaults do not resolve: %v", e.Name, preset, err)
		}
	}
	base, err := e.Resolve(experiments.Options{Preset: experiments.Quick, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	id0, err := experiments.Identity(e.Name, base)
	if err != nil {
		t.Fatal(err)
	}
	v0 := reflect.ValueOf(base.Config).Elem()
	typ := v0.Type()
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if !sf.IsExported() {
			continue
		}
		cfg := e.NewConfig()
		v := reflect.ValueOf(cfg).Elem()
		v.Set(v0)
		if !perturb(v.Field(i), sf) {
			t.Errorf("%s: cannot vary field %s of type %s", e.Name, sf.Name, sf.Type)
			continue
		}
		opt := base
		opt.Config = cfg
		id, err := experiments.Identity(e.Name, opt)
		if err != nil {
			t.Fatal(err)
		}
		if id == id0 {
			t.Errorf("%s: changing %s leaves the run's identity %s unchanged", e.Name, sf.Name, id)
		}
	}
	other := base
	other.Seed = 2
	if id, _ := experiments.Identity(e.Name, other); id == id0 {
		t.Errorf("%s: --seed does not change the identity", e.Name)
	}
}

// perturb changes v to another value of its type.
func perturb(v reflect.Value, sf reflect.StructField) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float()*2 + 1)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	default:
		return false
	}
	return true
}

// CheckStoredConfig submits a run of e with opt to a fresh store and decodes its stored
// options as a worker does: the decoded configuration must equal opt's (resolved) one. With
// compute, a worker then computes every cell and the stored result must carry the same
// flag values.
func CheckStoredConfig(t *testing.T, e experiments.Experiment, opt experiments.Options, compute bool) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	opt, err = e.Resolve(opt)
	if err != nil {
		t.Fatal(err)
	}
	reg := experiments.Registry{e}
	status, err := (&experiments.Runner{Store: st, Experiments: reg}).Start(ctx, e, opt, experiments.Mode{Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.GetRun(ctx, status.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := experiments.DecodeOptions(e, run.Options)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Config, opt.Config) {
		t.Errorf("%s: stored config decodes to\n%+v\nwant\n%+v", e.Name, got.Config, opt.Config)
	}
	if got.Preset != opt.Preset || got.Seed != opt.Seed || got.MaxMem != opt.MaxMem || got.TrialTimeout != opt.TrialTimeout {
		t.Errorf("%s: stored options %+v, want %+v", e.Name, got, opt)
	}
	if !compute {
		return
	}
	w := &experiments.Runner{Store: st, Experiments: reg, DataDir: opt.DataDir}
	if _, err := w.Work(ctx, status.Run.ID); err != nil {
		t.Fatal(err)
	}
	res, _, err := experiments.Report(ctx, st, reg, status.Run.ID, opt.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := experiments.FlagValues(opt.Config); !reflect.DeepEqual(res.Params, want) {
		t.Errorf("%s: the worker's result has params %v, want %v", e.Name, res.Params, want)
	}
}

// Run configures e for opt.Preset (quick when empty) with the given flags and runs it in
// memory, failing the test on any error.
func Run(t *testing.T, e experiments.Experiment, opt experiments.Options, flags map[string]string) *experiments.Result {
	t.Helper()
	if opt.Preset == "" {
		opt.Preset = experiments.Quick
	}
	cfg, err := e.Configure(opt.Preset, flags)
	if err != nil {
		t.Fatal(err)
	}
	opt.Config = cfg
	res, err := e.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// DefaultConfig is an experiment's defaultConfig(preset) (its package's DefaultConfig), tb
// failing on its error.
func DefaultConfig[C any](tb testing.TB, defaultConfig func(string) (C, error), preset string) C {
	tb.Helper()
	c, err := defaultConfig(preset)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
