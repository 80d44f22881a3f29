package search

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// Issue 52 (class 8): a nil random source, objective or Study was a nil-pointer panic inside
// the samplers; each is an error naming what was nil.
func TestNilArgumentsAreErrorsNotPanics(t *testing.T) {
	ctx := context.Background()
	space := Space{FloatParam("lr", 1e-4, 1e-1, true)}
	obj := func(context.Context, Config, float64) (float64, error) { return 0, nil }
	rng := rand.New(rand.NewPCG(1, 2))
	var st *Study
	cases := map[string]func() error{
		"Random.Ask":               func() error { _, err := Random{}.Ask(nil, space, nil); return err },
		"TPE.Ask":                  func() error { _, err := TPE{}.Ask(nil, space, nil); return err },
		"TuRBO.Ask":                func() error { _, err := TuRBO{}.Ask(nil, space, nil); return err },
		"HEBO.Ask":                 func() error { _, err := HEBO{}.Ask(nil, space, nil); return err },
		"FitGP":                    func() error { _, err := FitGP(nil, [][]float64{{1}, {2}}, []float64{1, 2}, GPOptions{}); return err },
		"Sequential.Search(rng)":   func() error { _, err := Sequential{Sampler: Random{}}.Search(ctx, nil, space, obj, 3); return err },
		"Sequential.Search(obj)":   func() error { _, err := Sequential{Sampler: Random{}}.Search(ctx, rng, space, nil, 3); return err },
		"BOHB.Search(rng)":         func() error { _, err := BOHB{}.Search(ctx, nil, space, obj, 3); return err },
		"HEBO.Search(rng)":         func() error { _, err := HEBO{}.Search(ctx, nil, space, obj, 3); return err },
		"HEBO.Search(obj)":         func() error { _, err := HEBO{}.Search(ctx, rng, space, nil, 3); return err },
		"TuRBO.Search(rng)":        func() error { _, err := TuRBO{}.Search(ctx, nil, space, obj, 3); return err },
		"(*Study)(nil).Ask":        func() error { _, err := st.Ask(); return err },
		"(*Study)(nil).Tell":       func() error { return st.Tell(0, 1, nil) },
		"Study{} without sampler":  func() error { _, err := (&Study{}).Ask(); return err },
		"NewStudy without sampler": func() error { _, err := NewStudy(space, nil, 1); return err },
	}
	for name, f := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			err := f()
			if err == nil || !(strings.Contains(err.Error(), "nil") || strings.Contains(err.Error(), "without")) {
				t.Errorf("%s: %v; want an error naming the nil argument", name, err)
			}
		}()
	}
	if st.Trials() != nil {
		t.Error("a nil Study has trials")
	}
}
