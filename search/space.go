package search

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a search-space dimension.
type Kind int

// Dimension kinds.
const (
	Float Kind = iota
	Int
	Categorical
)

// Param is one dimension of a search space.
type Param struct {
	Name string
	Kind Kind
	// Low and High bound Float and Int dimensions (inclusive).
	Low, High float64
	// Log samples Float and Int dimensions uniformly in log space (Low > 0).
	Log bool
	// Choices are a Categorical dimension's values.
	Choices []string
}

// FloatParam is a real dimension on [low, high], log-uniform when log is set.
func FloatParam(name string, low, high float64, log bool) Param {
	return Param{Name: name, Kind: Float, Low: low, High: high, Log: log}
}

// IntParam is an integer dimension on [low, high], log-uniform when log is set.
func IntParam(name string, low, high int, log bool) Param {
	return Param{Name: name, Kind: Int, Low: float64(low), High: float64(high), Log: log}
}

// CategoricalParam is a dimension taking one of choices.
func CategoricalParam(name string, choices ...string) Param {
	return Param{Name: name, Kind: Categorical, Choices: choices}
}

// Space is an ordered list of dimensions with distinct names.
type Space []Param

// Validate reports the first malformed dimension.
func (s Space) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("search: empty space")
	}
	seen := map[string]bool{}
	for _, p := range s {
		if p.Name == "" || seen[p.Name] {
			return fmt.Errorf("search: dimension name %q is empty or repeated", p.Name)
		}
		seen[p.Name] = true
		switch p.Kind {
		case Float, Int:
			if !(p.Low <= p.High) || math.IsInf(p.Low, 0) || math.IsInf(p.High, 0) {
				return fmt.Errorf("search: %s has bounds [%v, %v]", p.Name, p.Low, p.High)
			}
			if p.Log && p.Low <= 0 {
				return fmt.Errorf("search: %s is log-scaled with low bound %v ≤ 0", p.Name, p.Low)
			}
			if p.Kind == Int && (p.Low != math.Trunc(p.Low) || p.High != math.Trunc(p.High)) {
				return fmt.Errorf("search: integer %s has bounds [%v, %v]", p.Name, p.Low, p.High)
			}
		case Categorical:
			if len(p.Choices) == 0 {
				return fmt.Errorf("search: categorical %s has no choices", p.Name)
			}
			seenChoice := map[string]bool{}
			for _, c := range p.Choices {
				if seenChoice[c] {
					return fmt.Errorf("search: categorical %s repeats the choice %q", p.Name, c)
				}
				seenChoice[c] = true
			}
		default:
			return fmt.Errorf("search: %s has unknown kind %d", p.Name, p.Kind)
		}
	}
	return nil
}

// Index returns the position of the named dimension, or −1.
func (s Space) Index(name string) int {
	for i, p := range s {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// Config is one point of a space: Values[i] is dimension i's value (a Categorical dimension
// holds the index of its choice).
type Config struct {
	Space  Space
	Values []float64
}

// Float returns the named dimension's value.
func (c Config) Float(name string) float64 {
	i := c.Space.Index(name)
	if i < 0 {
		panic(fmt.Sprintf("search: no dimension %q", name))
	}
	return c.Values[i]
}

// Int returns the named integer dimension's value. It panics, as Choice does, when the
// dimension is not an integer one: rounding a Float dimension would quietly search a coarser
// space than the one declared, and samplers model the two kinds differently.
func (c Config) Int(name string) int {
	i := c.Space.Index(name)
	if i < 0 || c.Space[i].Kind != Int {
		panic(fmt.Sprintf("search: no integer dimension %q (Float reads a float dimension)", name))
	}
	return int(math.Round(c.Values[i]))
}

// Choice returns the named categorical dimension's choice.
func (c Config) Choice(name string) string {
	i := c.Space.Index(name)
	if i < 0 || c.Space[i].Kind != Categorical {
		panic(fmt.Sprintf("search: no categorical dimension %q", name))
	}
	return c.Space[i].Choices[int(c.Values[i])]
}

// String formats the config as name=value pairs.
func (c Config) String() string {
	parts := make([]string, len(c.Space))
	for i, p := range c.Space {
		var v string
		switch p.Kind {
		case Categorical:
			v = p.Choices[int(c.Values[i])]
		case Int:
			v = strconv.Itoa(int(math.Round(c.Values[i])))
		default:
			v = strconv.FormatFloat(c.Values[i], 'g', 6, 64)
		}
		parts[i] = p.Name + "=" + v
	}
	return strings.Join(parts, " ")
}

// ToUnit maps a config to the unit hypercube [0,1]^d, the coordinates model-based samplers
// work in: Float and Int dimensions linearly (in log space when Log is set; integers are
// widened by ±½ so that every integer owns an equal interval), a Categorical dimension of k
// choices to the centre of its choice's interval of width 1/k.
func (s Space) ToUnit(c Config) []float64 {
	u := make([]float64, len(s))
	for i, p := range s {
		v := c.Values[i]
		switch p.Kind {
		case Categorical:
			u[i] = (v + 0.5) / float64(len(p.Choices))
		default:
			lo, hi := p.bounds()
			if p.Log {
				v = math.Log(v)
			}
			if hi > lo {
				u[i] = (v - lo) / (hi - lo)
			} else {
				u[i] = 0.5
			}
		}
		u[i] = math.Min(math.Max(u[i], 0), 1)
	}
	return u
}

// FromUnit maps a point of [0,1]^d (clamped) back to a valid config, rounding integers and
// choosing categories by interval.
func (s Space) FromUnit(u []float64) Config {
	vals := make([]float64, len(s))
	for i, p := range s {
		x := u[i]
		if math.IsNaN(x) {
			x = 0.5 // a model that produced no coordinate proposes the middle, not a panic
		}
		x = math.Min(math.Max(x, 0), 1)
		switch p.Kind {
		case Categorical:
			k := len(p.Choices)
			vals[i] = float64(min(int(x*float64(k)), k-1))
		default:
			lo, hi := p.bounds()
			v := lo + x*(hi-lo)
			if p.Log {
				v = math.Exp(v)
			}
			if p.Kind == Int {
				v = math.Min(math.Max(math.Round(v), p.Low), p.High)
			} else {
				v = math.Min(math.Max(v, p.Low), p.High)
			}
			vals[i] = v
		}
	}
	return Config{Space: s, Values: vals}
}

// bounds are the dimension's interval in the coordinates ToUnit scales linearly.
func (p Param) bounds() (lo, hi float64) {
	lo, hi = p.Low, p.High
	if p.Kind == Int {
		if p.Log {
			lo, hi = math.Max(lo-0.5, lo/2), hi+0.5
		} else {
			lo, hi = lo-0.5, hi+0.5
		}
	}
	if p.Log {
		lo, hi = math.Log(lo), math.Log(hi)
	}
	return lo, hi
}
