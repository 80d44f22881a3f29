package skmlp

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/internal/nprand"
)

// TestInitBounds checks _init_coef's formula without scikit-learn: every weight and
// intercept of every layer in ±√(6/(fan_in+fan_out)), reaching the bound, uniform (variance
// b²/3) and centred.
func TestInitBounds(t *testing.T) {
	net := Init(nprand.New(7), 30, []int{200, 50}, 2)
	if !net.Logistic || net.Units[3] != 1 {
		t.Fatalf("two classes: units %v, logistic %v; want one logistic output", net.Units, net.Logistic)
	}
	for l := range net.Coefs {
		b := math.Sqrt(6 / float64(net.Units[l]+net.Units[l+1]))
		all := append(append([]float64{}, net.Coefs[l]...), net.Intercepts[l]...)
		top, sum, sq := 0.0, 0.0, 0.0
		for _, v := range all {
			if math.Abs(v) > b {
				t.Fatalf("layer %d: |%v| over the bound %v", l, v, b)
			}
			top, sum, sq = max(top, math.Abs(v)), sum+v, sq+v*v
		}
		n := float64(len(all))
		if n < 50 {
			continue
		}
		if top < b*(1-20/n) {
			t.Errorf("layer %d: largest |w| %v of %v draws, the bound %v", l, top, n, b)
		}
		if m := sum / n; math.Abs(m) > 4*b/math.Sqrt(3*n) {
			t.Errorf("layer %d: mean %v, want about 0 (±%v)", l, m, 4*b/math.Sqrt(3*n))
		}
		if v := sq / n; math.Abs(v/(b*b/3)-1) > 0.1 {
			t.Errorf("layer %d: variance %v, want b²/3 = %v", l, v, b*b/3)
		}
	}
	if got := InitBound(4, 50); got != math.Sqrt(6.0/54) {
		t.Errorf("InitBound(4, 50) = %v", got)
	}
}

// TestGradientFiniteDifferences checks backprop's gradients of the penalized batch loss
// (weights and intercepts, ReLU layers, softmax and logistic outputs) against central
// differences. The losses here stay far from the [ε, 1−ε] clip, where they are smooth.
func TestGradientFiniteDifferences(t *testing.T) {
	for _, classes := range []int{2, 3} {
		rng := nprand.New(uint32(classes))
		const rows, d = 7, 4
		x := make([]float64, rows*d)
		for i := range x {
			x[i] = rng.Uniform(-2, 2)
		}
		y := []int{0, 1, 1, 0, 1, 0, 1}
		if classes == 3 {
			y = []int{0, 1, 2, 2, 1, 0, 2}
		}
		idx := []int{3, 0, 6, 1, 5, 2, 4}
		net := Init(rng, d, []int{5, 3}, classes)
		f := newFitter(net, Params{Alpha: 0.3}, rows)
		f.backprop(x, y, d, idx)
		grads := make([][]float64, len(f.grads))
		for k, g := range f.grads {
			grads[k] = append([]float64{}, g...)
		}
		params := append(append([][]float64{}, net.Coefs...), net.Intercepts...)
		const h = 1e-6
		worst := 0.0
		for k, w := range params {
			for j := range w {
				w0 := w[j]
				w[j] = w0 + h
				up := f.backprop(x, y, d, idx)
				w[j] = w0 - h
				down := f.backprop(x, y, d, idx)
				w[j] = w0
				fd := (up - down) / (2 * h)
				e := math.Abs(fd-grads[k][j]) / max(1e-3, math.Abs(fd))
				worst = max(worst, e)
				if e > 1e-5 {
					t.Errorf("%d classes, parameter %d[%d]: gradient %v, finite differences %v", classes, k, j, grads[k][j], fd)
				}
			}
		}
		t.Logf("%d classes: worst relative error %.2g", classes, worst)
	}
}

// TestFitRefuses checks the errors a caller can cause.
func TestFitRefuses(t *testing.T) {
	x := []float64{0, 1, 1, 0, 2, 2, 3, 1, 0, 0, 1, 1}
	ok := Defaults()
	ok.Hidden = []int{3}
	cases := []struct {
		name string
		p    func(Params) Params
		x    []float64
		y    []int
		k    int
		want string
	}{
		{"no hidden", func(p Params) Params { p.Hidden = nil; return p }, x, []int{0, 1, 0, 1, 0, 1}, 2, "hidden"},
		{"lr", func(p Params) Params { p.LearningRateInit = 0; return p }, x, []int{0, 1, 0, 1, 0, 1}, 2, "learning_rate_init"},
		{"vf", func(p Params) Params { p.ValidationFraction = 1; return p }, x, []int{0, 1, 0, 1, 0, 1}, 2, "validation_fraction"},
		{"beta", func(p Params) Params { p.Beta2 = 1; return p }, x, []int{0, 1, 0, 1, 0, 1}, 2, "beta"},
		{"absent class", func(p Params) Params { return p }, x, []int{0, 1, 0, 1, 0, 1}, 3, "class 2 has no row"},
		{"label", func(p Params) Params { return p }, x, []int{0, 1, 0, 5, 0, 1}, 2, "label 5"},
		{"shape", func(p Params) Params { return p }, x[:11], []int{0, 1, 0, 1, 0, 1}, 2, "values"},
		{"NaN", func(p Params) Params { return p }, append(append([]float64{}, x[:11]...), math.NaN()), []int{0, 1, 0, 1, 0, 1}, 2, "non-finite"},
		{"one of a class", func(p Params) Params { p.EarlyStopping = true; p.ValidationFraction = 0.5; return p },
			x, []int{0, 0, 0, 0, 0, 1}, 2, "only 1 row"},
	}
	for _, c := range cases {
		_, err := Fit(context.Background(), c.p(ok), 0, c.x, 6, 2, c.y, c.k)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one saying %q", c.name, err, c.want)
		}
	}
	if _, err := Fit(context.Background(), ok, 0, x, 6, 2, []int{0, 1, 0, 1, 0, 1}, 2); err != nil {
		t.Errorf("a valid fit: %v", err)
	}
}

// TestBeforeStep: the hook is called before every StepEvery-th Adam step, numbered from 0
// across epochs, first with the initial network, and leaves the fit as it was.
func TestBeforeStep(t *testing.T) {
	rows, d := 40, 3
	x := make([]float64, rows*d)
	y := make([]int, rows)
	for i := range rows {
		y[i] = i % 2
		for j := range d {
			x[i*d+j] = float64((i*7+j*3)%11)/5 - 1 + float64(y[i])
		}
	}
	p := Defaults()
	p.Hidden, p.BatchSize, p.MaxIter, p.EarlyStopping, p.ValidationFraction = []int{4}, 8, 5, true, 0.2
	plain, err := Fit(context.Background(), p, 3, x, rows, d, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	var at []int
	var first *Net
	p.StepEvery = 3
	p.BeforeStep = func(_ context.Context, step int, n *Net) error {
		if first == nil {
			first = n.clone()
		}
		at = append(at, step)
		return nil
	}
	hooked, err := Fit(context.Background(), p, 3, x, rows, d, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	steps := hooked.NIter * ((hooked.TrainRows + 7) / 8)
	if len(at) != (steps+2)/3 || at[0] != 0 || at[len(at)-1] != 3*(len(at)-1) {
		t.Errorf("hook at steps %v of %d", at, steps)
	}
	if init := Init(nprand.New(3), d, p.Hidden, 2); fmt.Sprint(first.Coefs) != fmt.Sprint(init.Coefs) {
		t.Error("the first call did not see the initial weights")
	}
	if fmt.Sprint(plain.Net.Coefs) != fmt.Sprint(hooked.Net.Coefs) || plain.NIter != hooked.NIter {
		t.Error("the hook changed the fit")
	}
	p.BeforeStep = func(context.Context, int, *Net) error { return context.Canceled }
	if _, err := Fit(context.Background(), p, 3, x, rows, d, y, 2); err != context.Canceled {
		t.Errorf("the hook's error came back as %v", err)
	}
}
