package search

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// allKindsSpace has one dimension of every kind, log-scaled ones included.
func allKindsSpace() Space {
	return Space{
		FloatParam("lin", -2, 3, false),
		FloatParam("lr", 1e-5, 1, true),
		IntParam("depth", 1, 4, false),
		IntParam("width", 16, 1024, true),
		IntParam("ones", 1, 1, false),
		CategoricalParam("padding", "valid", "same"),
		CategoricalParam("act", "relu", "tanh", "elu", "gelu", "selu"),
	}
}

func TestValidate(t *testing.T) {
	if err := allKindsSpace().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]Space{
		"empty":        {},
		"no name":      {FloatParam("", 0, 1, false)},
		"repeated":     {FloatParam("x", 0, 1, false), IntParam("x", 0, 1, false)},
		"reversed":     {FloatParam("x", 1, 0, false)},
		"infinite":     {FloatParam("x", 0, math.Inf(1), false)},
		"NaN":          {FloatParam("x", math.NaN(), 1, false)},
		"log at zero":  {FloatParam("x", 0, 1, true)},
		"int fraction": {Param{Name: "x", Kind: Int, Low: 0.5, High: 3}},
		"no choices":   {CategoricalParam("x")},
		"unknown kind": {Param{Name: "x", Kind: Kind(9)}},
	}
	for name, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, s)
		}
	}
}

// Every integer and every choice survives ToUnit then FromUnit exactly, and floats up to
// rounding.
func TestUnitRoundTrip(t *testing.T) {
	s := allKindsSpace()
	check := func(name string, v float64) {
		t.Helper()
		i := s.Index(name)
		c := s.FromUnit(make([]float64, len(s))) // a valid config to vary one dimension of
		c.Values[i] = v
		u := s.ToUnit(c)
		for d, x := range u {
			if !(x >= 0 && x <= 1) {
				t.Fatalf("%s=%v: unit coordinate %d is %v", name, v, d, x)
			}
		}
		got := s.FromUnit(u).Values[i]
		if math.Abs(got-v) > 1e-12*math.Max(1, math.Abs(v)) {
			t.Errorf("%s: %v → %v → %v", name, v, u[i], got)
		}
	}
	for _, v := range []float64{-2, -1.25, 0, 0.1, 2.999, 3} {
		check("lin", v)
	}
	for _, v := range []float64{1e-5, 3e-5, 1e-3, 0.5, 1} {
		check("lr", v)
	}
	for v := 1; v <= 4; v++ {
		check("depth", float64(v))
	}
	for v := 16; v <= 1024; v++ {
		check("width", float64(v))
	}
	check("ones", 1)
	check("padding", 0)
	check("padding", 1)
	for v := range 5 {
		check("act", float64(v))
	}
}

// FromUnit always yields a valid config, and ToUnit is a right inverse on those: FromUnit ∘
// ToUnit ∘ FromUnit = FromUnit, also for points outside the cube, which are clamped.
func TestFromUnitValidAndStable(t *testing.T) {
	s := allKindsSpace()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		u := make([]float64, len(s))
		for i := range u {
			u[i] = rng.Float64()*1.4 - 0.2
		}
		c := s.FromUnit(u)
		for i, p := range s {
			v := c.Values[i]
			switch p.Kind {
			case Categorical:
				if v != math.Trunc(v) || v < 0 || int(v) >= len(p.Choices) {
					t.Fatalf("%s: choice index %v", p.Name, v)
				}
			case Int:
				if v != math.Trunc(v) || v < p.Low || v > p.High {
					t.Fatalf("%s: integer %v outside [%v, %v]", p.Name, v, p.Low, p.High)
				}
			default:
				if v < p.Low || v > p.High {
					t.Fatalf("%s: %v outside [%v, %v]", p.Name, v, p.Low, p.High)
				}
			}
		}
		again := s.FromUnit(s.ToUnit(c))
		for i := range c.Values {
			if math.Abs(again.Values[i]-c.Values[i]) > 1e-12*math.Max(1, math.Abs(c.Values[i])) {
				t.Fatalf("%s: %v came back as %v", s[i].Name, c.Values[i], again.Values[i])
			}
		}
	}
}

// A uniform unit coordinate gives every integer of a linear range, and every choice, the same
// probability; a log integer range is log-uniform, so small values are more likely.
func TestUnitCellsAreFair(t *testing.T) {
	s := Space{IntParam("n", 1, 4, false), CategoricalParam("c", "a", "b", "c"), IntParam("w", 1, 100, true)}
	counts := [3]map[float64]int{{}, {}, {}}
	const grid = 12000
	for k := range grid {
		x := (float64(k) + 0.5) / grid
		c := s.FromUnit([]float64{x, x, x})
		for i := range counts {
			counts[i][c.Values[i]]++
		}
	}
	for v := 1.0; v <= 4; v++ {
		if counts[0][v] != grid/4 {
			t.Errorf("integer %v owns %d of %d grid points, want %d", v, counts[0][v], grid, grid/4)
		}
	}
	for v := 0.0; v < 3; v++ {
		if counts[1][v] != grid/3 {
			t.Errorf("choice %v owns %d of %d grid points, want %d", v, counts[1][v], grid, grid/3)
		}
	}
	if !(counts[2][1] > counts[2][10] && counts[2][10] > counts[2][100]) || len(counts[2]) != 100 {
		t.Errorf("log integer cells: 1→%d, 10→%d, 100→%d, %d values", counts[2][1], counts[2][10], counts[2][100], len(counts[2]))
	}
}

func TestConfigAccessors(t *testing.T) {
	s := allKindsSpace()
	c := Config{Space: s, Values: []float64{0.5, 1e-3, 3, 64, 1, 1, 2}}
	if c.Float("lr") != 1e-3 || c.Int("width") != 64 || c.Choice("padding") != "same" || c.Choice("act") != "elu" {
		t.Errorf("accessors read %v %v %v %v", c.Float("lr"), c.Int("width"), c.Choice("padding"), c.Choice("act"))
	}
	if got := c.String(); !strings.Contains(got, "width=64") || !strings.Contains(got, "act=elu") || !strings.Contains(got, "lr=0.001") {
		t.Errorf("String() = %q", got)
	}
	for _, f := range []func(){func() { c.Float("nope") }, func() { c.Choice("lr") }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic for a missing dimension")
				}
			}()
			f()
		}()
	}
}
