package ahsc

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
)

// A user's search space (--space FILE) replaces the space of the model it configures, so it
// must name exactly the hyperparameters that model's builder reads (some on either of two
// scales: width or log2_width, one of them), each as a dimension the builder can read: an
// integer one (depth, a width) as an int dimension or a categorical one of integer choices; a
// real one (a learning rate) as a float, int or numeric categorical dimension; a word (a
// padding) as a categorical one of the words the model knows. Its bounds and scale are the
// user's, within what the model can build.

// valueClass is what a model reads a hyperparameter as.
type valueClass int

const (
	integerValue valueClass = iota
	realValue
	wordValue
)

// hyper is one hyperparameter a model's builder reads.
type hyper struct {
	name   string
	class  valueClass
	lo, hi float64  // the values the model can build (integer and real)
	words  []string // word: the values the model knows
	means  string   // what it sets, for messages and docs
	// or names the hyperparameter this one may replace, the same thing on another scale
	// (width for log2_width): a space gives one of the two.
	or string
}

// modelHypers are the hyperparameters of the model a run on dataset trains (a user's table
// when data is set), and the model's name; nil when a space cannot be given for it.
func modelHypers(dataset string, data bool) ([]hyper, string) {
	switch g := groupOf(dataset); {
	case data || g == openML:
		return []hyper{
			{"depth", integerValue, 1, 16, nil, "the number of hidden layers", ""},
			{"log2_width", integerValue, 0, 14, nil, "log2 of each hidden layer's width", ""},
			{"log2_batch_size", integerValue, 0, 16, nil, "log2 of the batch size (at most the training rows)", ""},
			{"log10_learning_rate", realValue, -10, 1, nil, "log10 of Adam's learning rate", ""},
			{"width", integerValue, 1, 1 << 14, nil, "each hidden layer's width", "log2_width"},
			{"batch_size", integerValue, 1, 1 << 16, nil, "the batch size (at most the training rows)", "log2_batch_size"},
			{"learning_rate", realValue, 1e-10, 10, nil, "Adam's learning rate", "log10_learning_rate"},
		}, "the OpenML MLP"
	case g == bayesmark:
		return []hyper{
			{"hidden_layer_sizes", integerValue, 1, 1 << 14, nil, "the hidden layer's width", ""},
			{"alpha", realValue, 0, 1e6, nil, "the L2 penalty", ""},
			{"batch_size", integerValue, 1, 1 << 16, nil, "the batch size (at most the training rows)", ""},
			{"learning_rate_init", realValue, 1e-12, 10, nil, "Adam's learning rate", ""},
			{"one_minus_beta_1", realValue, 1e-12, 1, nil, "1 − Adam's β1", ""},
			{"one_minus_beta_2", realValue, 1e-12, 1, nil, "1 − Adam's β2", ""},
			{"epsilon", realValue, 1e-30, 1, nil, "Adam's ε", ""},
		}, "the Bayesmark MLP"
	case dataset == "mnist" || dataset == "svhn":
		hs := []hyper{
			{"filters", integerValue, 1, 64, nil, "the number of filters", ""},
			{"kernel", integerValue, 1, 12, nil, "the convolutions' kernel size", ""},
			{"padding", wordValue, 0, 0, []string{"valid", "same"}, "the convolutions' padding", ""},
			{"blocks", integerValue, 1, 8, nil, "the convolution blocks", ""},
		}
		if dataset == "svhn" {
			hs = append(hs,
				hyper{"dropout", realValue, 0, 0.99, nil, "the blocks' dropout rate", ""},
				hyper{"final_dropout", realValue, 0, 0.99, nil, "the dense layer's dropout rate", ""},
				hyper{"log2_units", integerValue, 0, 14, nil, "log2 of the dense layer's width", ""})
		}
		return hs, "the " + dataset + " ConvNet"
	}
	return nil, ""
}

// loadSpace reads c.Space (made absolute: a run's identity and a worker started in another
// folder name the same file) and checks it against the model the run trains.
func (c *Config) loadSpace() error {
	c.userSpace = nil
	c.Space = strings.TrimSpace(c.Space)
	if c.Space == "" {
		return nil
	}
	abs, err := filepath.Abs(c.Space)
	if err != nil {
		return experiments.FlagErrorf("space", "%q: %v", c.Space, err)
	}
	c.Space = abs
	if c.Data == "" && !c.trial {
		return experiments.FlagErrorf("space", "applies to --data: a paper dataset is searched in Table 2's space, "+
			"the one its paper values come from (hyperflat trial takes --space with a paper dataset)")
	}
	if c.Data == "" && c.Protocol == protocolAuthors {
		return experiments.FlagErrorf("space", "does not apply to --protocol authors, whose spaces are the authors' code's")
	}
	hs, model := modelHypers(c.Dataset, c.Data != "")
	if hs == nil {
		return experiments.FlagErrorf("space", "configures one model: name one dataset, not %s", c.Dataset)
	}
	sf, err := search.ReadSpaceFile(abs)
	if err == nil {
		err = checkSpace(sf, hs, model)
	}
	if err != nil {
		return experiments.FlagErrorf("space", "%v", err)
	}
	c.userSpace = sf
	return nil
}

// checkSpace refuses a space that the model's builder could not read: a name it does not
// know, one it needs and does not find, a type it cannot read, bounds it cannot build.
func checkSpace(sf *search.SpaceFile, hs []hyper, model string) error {
	reads := readsText(hs)
	for i, p := range sf.Space {
		k := slices.IndexFunc(hs, func(h hyper) bool { return h.name == p.Name })
		if k < 0 {
			return sf.Errorf(i, "", "%s has no such hyperparameter (it reads %s)", model, reads)
		}
		if err := checkDimension(sf, i, hs[k], model); err != nil {
			return err
		}
	}
	for _, h := range hs {
		if h.or != "" {
			continue
		}
		given := []int{}
		for _, a := range hs {
			if i := sf.Space.Index(a.name); i >= 0 && (a.name == h.name || a.or == h.name) {
				given = append(given, i)
			}
		}
		switch {
		case len(given) == 0:
			return &search.SpaceError{File: sf.File, Field: h.name, Msg: fmt.Sprintf(
				"is missing: %s reads %s (to fix one, make it a categorical of one choice)", model, reads)}
		case len(given) > 1:
			slices.Sort(given)
			return sf.Errorf(given[1], "", "sets what %s (line %d) sets: give one of them", sf.Space[given[0]].Name, sf.Lines[given[0]])
		}
	}
	return nil
}

// readsText lists a model's hyperparameters for messages: "depth, log2_width (or width), …".
func readsText(hs []hyper) string {
	var names []string
	for _, h := range hs {
		if h.or != "" {
			continue
		}
		n := h.name
		for _, a := range hs {
			if a.or == h.name {
				n += " (or " + a.name + ")"
			}
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// checkDimension checks dimension i against the hyperparameter h it sets.
func checkDimension(sf *search.SpaceFile, i int, h hyper, model string) error {
	p := sf.Space[i]
	if h.class == wordValue {
		if p.Kind != search.Categorical {
			return sf.Errorf(i, "type", "want categorical: it is %s, one of %s", h.means, strings.Join(h.words, ", "))
		}
		for _, c := range p.Choices {
			if !slices.Contains(h.words, c) {
				return sf.Errorf(i, "choices", "%q: it is %s, one of %s", c, h.means, strings.Join(h.words, ", "))
			}
		}
		return nil
	}
	values := []float64{p.Low, p.High}
	switch {
	case p.Kind == search.Float && h.class == integerValue:
		return sf.Errorf(i, "type", "want int, or categorical with integer choices, not float (it is %s)", h.means)
	case p.Kind == search.Categorical:
		values = values[:0]
		for _, c := range p.Choices {
			x, err := strconv.ParseFloat(c, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || (h.class == integerValue && x != math.Trunc(x)) {
				want := "a number"
				if h.class == integerValue {
					want = "an integer"
				}
				return sf.Errorf(i, "choices", "%q: want %s (it is %s)", c, want, h.means)
			}
			values = append(values, x)
		}
	}
	for _, x := range values {
		if x < h.lo || x > h.hi {
			return sf.Errorf(i, "", "%g is outside [%g, %g], what %s can build (it is %s)", x, h.lo, h.hi, model, h.means)
		}
	}
	return nil
}

// The readers of a configuration's hyperparameters, whichever kind of dimension a user's
// space gives them (checkSpace has made sure it is one they can read): a categorical
// dimension's choice is read as the number it is written as.

// hpFloat is the named hyperparameter as a real number.
func hpFloat(cfg search.Config, name string) float64 {
	i := cfg.Space.Index(name)
	if i < 0 {
		panic(fmt.Sprintf("ahsc: the space has no %q", name)) // checkSpace's and the built-in spaces' bug
	}
	switch p := cfg.Space[i]; p.Kind {
	case search.Categorical:
		x, err := strconv.ParseFloat(p.Choices[int(cfg.Values[i])], 64)
		if err != nil {
			panic(fmt.Sprintf("ahsc: %s: %v", name, err))
		}
		return x
	case search.Int:
		return math.Round(cfg.Values[i]) // as search.Config.Int reads it
	}
	return cfg.Values[i]
}

// hpScaled is the hyperparameter name where the space has it, else base^logName, the form
// of Table 2's space (a width as log2_width).
func hpScaled(cfg search.Config, name, logName string, base float64) float64 {
	if cfg.Space.Index(name) >= 0 {
		return hpFloat(cfg, name)
	}
	return math.Pow(base, hpFloat(cfg, logName))
}

// hpInt is the named hyperparameter as an integer.
func hpInt(cfg search.Config, name string) int { return int(math.Round(hpFloat(cfg, name))) }

// TrialConfig is the configuration `hyperflat trial` evaluates a configuration under: the
// preset's, with the given flags (dataset, protocol, space...), finished. Unlike a run, a
// trial takes a --space for a paper dataset: it evaluates one configuration, with no paper
// value to compare it to.
func TrialConfig(preset string, values map[string]string) (*Config, error) {
	cfg, err := Experiment().Configure(preset, values)
	if err != nil {
		return nil, err
	}
	c := cfg.(*Config)
	c.trial = true
	if err := c.Finish(preset); err != nil {
		return nil, err
	}
	return c, nil
}
