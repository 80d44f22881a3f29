package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestStudyAskTell(t *testing.T) {
	space := Space{FloatParam("x", -1, 1, false)}
	st, err := NewStudy(space, Random{}, 7)
	if err != nil {
		t.Fatal(err)
	}
	values := []float64{0.3, math.NaN(), 0.1, math.Inf(1), 0.2, math.Inf(-1), 0.05}
	for i, v := range values {
		tr, err := st.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if tr.ID != i || tr.State != Running || tr.Fidelity != 1 {
			t.Fatalf("ask %d gave %+v", i, tr)
		}
		var evalErr error
		if i == 4 {
			evalErr = errors.New("diverged")
		}
		if err := st.Tell(tr.ID, v, evalErr); err != nil {
			t.Fatal(err)
		}
	}
	want := []State{Complete, Failed, Complete, Failed, Failed, Failed, Complete}
	for i, tr := range st.Trials() {
		if tr.State != want[i] {
			t.Errorf("trial %d (value %v) is %v, want %v", i, values[i], tr.State, want[i])
		}
		if tr.State == Failed && (tr.Err == "" || !math.IsNaN(tr.Value)) {
			t.Errorf("failed trial %d: value %v, error %q", i, tr.Value, tr.Err)
		}
	}
	if got := st.Trials()[4].Err; got != "diverged" {
		t.Errorf("trial 4 error %q", got)
	}
	best, err := Best(st.Trials())
	if err != nil || best.ID != 6 || best.Value != 0.05 {
		t.Errorf("Best = %+v, %v; want trial 6 at 0.05", best, err)
	}
	if err := st.Tell(6, 0, nil); err == nil {
		t.Error("a trial was told twice")
	}
	for _, id := range []int{-1, len(values)} {
		if err := st.Tell(id, 0, nil); err == nil {
			t.Errorf("Tell(%d) accepted", id)
		}
	}
	// Trials is a copy.
	st.Trials()[0].Value = -100
	if st.Trials()[0].Value == -100 {
		t.Error("Trials exposes the study's slice")
	}
}

func TestNewStudyRejects(t *testing.T) {
	if _, err := NewStudy(Space{}, Random{}, 1); err == nil {
		t.Error("empty space accepted")
	}
	if _, err := NewStudy(Space{FloatParam("x", 0, 1, false)}, nil, 1); err == nil {
		t.Error("nil sampler accepted")
	}
}

func TestBestIgnoresFailedAndLowFidelity(t *testing.T) {
	trials := []Trial{
		{ID: 0, Value: 5, Fidelity: 1, State: Complete},
		{ID: 1, Value: -9, Fidelity: 1.0 / 3, State: Complete},
		{ID: 2, Value: math.NaN(), Fidelity: 1, State: Failed},
		{ID: 3, Value: 4, Fidelity: 1, State: Complete},
		{ID: 4, Value: -1, Fidelity: 1, State: Running},
	}
	best, err := Best(trials)
	if err != nil || best.ID != 3 {
		t.Errorf("Best = %+v, %v; want trial 3", best, err)
	}
	if _, err := Best(trials[1:3]); err == nil {
		t.Error("Best found a full-fidelity complete trial where there is none")
	}
}

// A Study driven by the same seed proposes the same configurations.
func TestStudySeeded(t *testing.T) {
	run := func(seed uint64) []float64 {
		st, err := NewStudy(allKindsSpace(), Random{}, seed)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for range 5 {
			tr, err := st.Ask()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tr.Config.Values...)
			_ = st.Tell(tr.ID, 0, nil)
		}
		return out
	}
	a, b, c := run(3), run(3), run(4)
	if !sameFloats(a, b) {
		t.Error("same seed, different proposals")
	}
	if sameFloats(a, c) {
		t.Error("different seeds, same proposals")
	}
}

// Sequential spends one unit of budget per evaluation, failed ones included, and goes on.
func TestSequentialCountsFailures(t *testing.T) {
	space := Space{FloatParam("x", 0, 1, false)}
	calls := 0
	obj := func(_ context.Context, cfg Config, fid float64) (float64, error) {
		calls++
		if fid != 1 {
			t.Errorf("Sequential asked for fidelity %v", fid)
		}
		switch calls % 3 {
		case 1:
			return 0, errors.New("boom")
		case 2:
			return math.NaN(), nil
		}
		return cfg.Float("x"), nil
	}
	trials, err := Sequential{Label: "random", Sampler: Random{}}.Search(context.Background(), rand.New(rand.NewPCG(1, 1)), space, obj, 12)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 12 || len(trials) != 12 {
		t.Fatalf("%d calls, %d trials; want 12", calls, len(trials))
	}
	failed := 0
	for _, tr := range trials {
		if tr.State == Failed {
			failed++
		}
	}
	if failed != 8 {
		t.Errorf("%d failed trials, want 8", failed)
	}
	if _, err := Best(trials); err != nil {
		t.Error(err)
	}
}

func TestSequentialStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	obj := func(context.Context, Config, float64) (float64, error) { cancel(); return 1, nil }
	trials, err := Sequential{Sampler: TPE{}}.Search(ctx, rand.New(rand.NewPCG(1, 1)), Space{FloatParam("x", 0, 1, false)}, obj, 10)
	if !errors.Is(err, context.Canceled) || len(trials) != 1 {
		t.Errorf("after cancel: %d trials, error %v", len(trials), err)
	}
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}
