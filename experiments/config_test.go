package experiments

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type testConfig struct {
	// Name is a choice.
	Name string `flag:"name" json:"name" default:"a" choices:"a,b" usage:"a name"`
	// Steps differ per preset.
	Steps int `flag:"steps" json:"steps" quick:"10" paper:"1000" usage:"steps"`
	// Rate is derived when zero.
	Rate   float64       `flag:"rate" json:"rate" quick:"0" paper:"0.5" derived:"1/steps" usage:"a rate"`
	Zetas  []float64     `flag:"zetas" json:"zetas" default:"1,2" usage:"a grid"`
	Picks  []string      `flag:"picks" json:"picks" default:"x" choices:"x,y" usage:"some picks"`
	Wait   time.Duration `flag:"wait" json:"wait" default:"0" usage:"a duration"`
	Seed   uint64        `flag:"seed2" json:"seed2" default:"7" usage:"a seed"`
	On     bool          `flag:"on" json:"on" default:"true" usage:"a switch"`
	hidden int
}

func (c *testConfig) Finish(string) error {
	if c.Steps <= 0 {
		return FlagErrorf("steps", "%d: want a positive integer", c.Steps)
	}
	if c.Rate == 0 {
		c.Rate = 1 / float64(c.Steps)
	}
	return nil
}

func testExperiment() Experiment {
	return Define("test", "", "", func(context.Context, Options, *testConfig) (*Plan, error) { return nil, nil }, nil)
}

func TestConfigPresetsAndFlags(t *testing.T) {
	e := testExperiment()
	quick, err := e.Resolve(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &testConfig{Name: "a", Steps: 10, Rate: 0.1, Zetas: []float64{1, 2}, Picks: []string{"x"}, Seed: 7, On: true}
	if !reflect.DeepEqual(quick.Config, want) {
		t.Errorf("quick defaults: %+v, want %+v", quick.Config, want)
	}
	cfg, err := e.Configure(PaperScale, map[string]string{"steps": "20", "zetas": "3, 4.5", "picks": "y,x", "wait": "90s", "on": "false"})
	if err != nil {
		t.Fatal(err)
	}
	paper, err := e.Resolve(Options{Preset: PaperScale, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	want = &testConfig{Name: "a", Steps: 20, Rate: 0.5, Zetas: []float64{3, 4.5}, Picks: []string{"y", "x"}, Wait: 90 * time.Second, Seed: 7}
	if !reflect.DeepEqual(paper.Config, want) {
		t.Errorf("paper with flags: %+v, want %+v", paper.Config, want)
	}
	got := FlagValues(paper.Config)
	wantFlags := map[string]string{"name": "a", "steps": "20", "rate": "0.5", "zetas": "3,4.5", "picks": "y,x", "wait": "1m30s", "seed2": "7", "on": "false"}
	if !reflect.DeepEqual(got, wantFlags) {
		t.Errorf("FlagValues = %v, want %v", got, wantFlags)
	}
	// What FlagValues writes, Configure reads back to the same config.
	again, err := e.Configure(PaperScale, got)
	if err != nil || !reflect.DeepEqual(again, paper.Config) {
		t.Errorf("flag values do not round-trip: %+v, %v", again, err)
	}
	fields := e.Fields()
	if len(fields) != 8 || fields[1].Name != "steps" || fields[1].Defaults() != "quick 10; paper 1000" ||
		fields[2].Defaults() != "quick 1/steps; paper 0.5" || !strings.Contains(fields[0].HelpText(), "(a|b)") {
		t.Errorf("fields: %+v", fields)
	}
}

func TestConfigErrors(t *testing.T) {
	e := testExperiment()
	for flags, want := range map[string]string{
		"name=c":    "--name \"c\": want one of a, b",
		"steps=x":   "--steps \"x\": want an integer",
		"steps=0":   "--steps 0: want a positive integer",
		"rate=NaN":  "--rate \"NaN\": want a finite number",
		"zetas=1,z": "--zetas has \"z\"",
		"zetas=,":   "--zetas \",\" has no value",
		"picks=x,q": "--picks \"q\": want one of x, y",
		"wait=soon": "--wait \"soon\": want a duration",
		"nope=1":    "--nope is not a flag of test",
		// Issue 52: --tpe-startup 0 silently meant the derived default.
		"rate=0": "--rate 0: 0 is what leaving the flag out means (derived: 1/steps); give a positive value",
	} {
		k, v, _ := strings.Cut(flags, "=")
		cfg, err := e.Configure(Quick, map[string]string{k: v})
		if err == nil {
			_, err = e.Resolve(Options{Config: cfg})
		}
		var fe *FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want a FlagError containing %q", flags, err, want)
		}
	}
	if _, err := e.Resolve(Options{Preset: "huge"}); err == nil {
		t.Error("an unknown preset was accepted")
	}
	if _, err := e.Resolve(Options{Config: &soakLike{}}); err == nil {
		t.Error("a config of another type was accepted")
	}
	if _, err := Fields(&badJSON{}); err == nil {
		t.Error("a json name differing from the flag was accepted")
	}
	if _, err := Fields(&badType{}); err == nil {
		t.Error("an unsupported field type was accepted")
	}
}

func TestDecodeConfigRefusesUnknownFields(t *testing.T) {
	e := testExperiment()
	if _, err := e.decodeConfig([]byte(`{"name":"a","steps":3,"removed":1}`)); err == nil {
		t.Error("a stored config with a field the type lacks was accepted")
	}
	cfg, err := e.decodeConfig([]byte(`{"name":"b","steps":3}`))
	if err != nil || cfg.(*testConfig).Steps != 3 {
		t.Errorf("decode: %+v, %v", cfg, err)
	}
}

func TestDeriveSeed(t *testing.T) {
	a := DeriveSeed(1, "x", "repeat", 1)
	if a != DeriveSeed(1, "x", "repeat", 1) {
		t.Error("not deterministic")
	}
	distinct := map[uint64]string{}
	for name, s := range map[string]uint64{
		"seed 1 repeat 1": a,
		"seed 2 repeat 0": DeriveSeed(2, "x", "repeat", 0),
		"seed 1 repeat 0": DeriveSeed(1, "x", "repeat", 0),
		"ab,c":            DeriveSeed(1, "ab", "c"),
		"a,bc":            DeriveSeed(1, "a", "bc"),
		"int 1 vs str 1":  DeriveSeed(1, "x", "repeat", "1"),
		"other exp":       DeriveSeed(1, "y", "repeat", 1),
	} {
		if prev, ok := distinct[s]; ok {
			t.Errorf("%s and %s share the seed %d", name, prev, s)
		}
		distinct[s] = name
	}
}

type soakLike struct{}

func (*soakLike) Finish(string) error { return nil }

type badJSON struct {
	N int `flag:"n" json:"m" default:"1" usage:"n"`
}

func (*badJSON) Finish(string) error { return nil }

type badType struct {
	M map[string]int `flag:"m" json:"m" usage:"m"`
}

func (*badType) Finish(string) error { return nil }
