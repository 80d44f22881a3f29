package dashboard

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// A run's trials are read from its done cells, whatever the experiment, by one rule:
//   - a cell whose output has an "evaluations" array (an HPO search: ahsc) holds one trial per
//     element: its "config" string ("name=value name=value", as search.Config prints it) gives
//     the hyperparameters, and every other number (NaN and infinities as the strings "NaN",
//     "+Inf", "-Inf"; booleans as 0 and 1) a value column, so that a field added to the
//     evaluations later shows as a column without a change here;
//   - any other cell is one trial: its numeric configuration fields (ζ, …) are the
//     hyperparameters and its stored metrics the values;
//   - a "history" array of objects with a "step" (in the output, else the cell's stored
//     history) gives the cell's learning curves, one per numeric field.
//
// A cell's string configuration fields name its group (the dataset: methods compare within
// one) and its method; "repeat" or "replicate" its repeat. A cell whose configuration says
// "hidden" (Bayesmark's random reference, not a requested method) is counted, not shown.

// trial is one evaluation: a configuration and what it scored.
type trial struct {
	cell, order int       // the cell's index; the evaluation's place in it
	params      []float64 // by trialSet.params index: a number, or a category's index; NaN when absent
	values      []float64 // by trialSet.values index; NaN when absent
}

// cellTrials is what one done cell contributes.
type cellTrials struct {
	index    int
	key      string
	finished time.Time // the completion the cell was parsed at: a reopened cell is parsed again
	group    string
	method   string
	repeat   int // -1 when the cell names none
	hidden   bool
	trials   []trial
	metrics  map[string]float64
	// curves are per-step series of the cell ("history": weightdecay's hyper-steps) by field.
	steps      []float64
	curves     map[string][]float64
	screenings []screening
}

// screening is one AHSC screening: the score (μ) and, where trained, the final metrics.
type screening struct {
	Score      float64 `json:"score"`
	Trained    bool    `json:"trained"`
	Objective  float64 `json:"val_objective"`
	TestMetric float64 `json:"test_metric"`
}

// column is a hyperparameter or value column, its categories when not numeric.
type column struct {
	Name    string   `json:"name"`
	Cats    []string `json:"categories,omitempty"`
	cat     map[string]int
	numeric bool
}

// trialSet is every done cell's trials, parsed once per cell completion.
type trialSet struct {
	cells  map[int]*cellTrials // by cell index
	params []*column
	values []*column
	pIndex map[string]int
	vIndex map[string]int
	order  []int     // cell indices, ascending
	used   time.Time // when a request last asked for them (Server.evictTrials)
}

func newTrialSet() *trialSet {
	return &trialSet{cells: map[int]*cellTrials{}, pIndex: map[string]int{}, vIndex: map[string]int{}}
}

// update parses the done cells not parsed yet (or completed again since) and forgets the
// cells no longer done, so that a live run's trials grow at the cost of its new cells only.
func (ts *trialSet) update(cells []store.Cell) {
	seen := make(map[int]bool, len(cells))
	for i := range cells {
		c := &cells[i]
		if c.Status != store.Done {
			continue
		}
		seen[c.Index] = true
		if old := ts.cells[c.Index]; old != nil && old.finished.Equal(c.Finished) {
			continue
		}
		ts.cells[c.Index] = ts.parse(c)
	}
	for i := range ts.cells {
		if !seen[i] {
			delete(ts.cells, i)
		}
	}
	ts.order = ts.order[:0]
	for i := range ts.cells {
		ts.order = append(ts.order, i)
	}
	sort.Ints(ts.order)
}

func (ts *trialSet) paramIndex(name string) int {
	if i, ok := ts.pIndex[name]; ok {
		return i
	}
	ts.pIndex[name] = len(ts.params)
	ts.params = append(ts.params, &column{Name: name})
	return len(ts.params) - 1
}

func (ts *trialSet) valueIndex(name string) int {
	if i, ok := ts.vIndex[name]; ok {
		return i
	}
	ts.vIndex[name] = len(ts.values)
	ts.values = append(ts.values, &column{Name: name})
	return len(ts.values) - 1
}

// setParam stores a hyperparameter's value: a number, or, in a column whose first value was
// not a number, a category (a later number there is a category too; a later word in a numeric
// column is NaN, since a column is one or the other).
func (ts *trialSet) setParam(t *trial, name, text string) {
	k := ts.paramIndex(name)
	col := ts.params[k]
	for len(t.params) <= k {
		t.params = append(t.params, math.NaN())
	}
	x, err := strconv.ParseFloat(text, 64)
	if col.cat == nil {
		if err == nil {
			t.params[k], col.numeric = x, true
			return
		}
		if col.numeric {
			return
		}
		col.cat = map[string]int{}
	}
	c, ok := col.cat[text]
	if !ok {
		c = len(col.Cats)
		col.cat[text] = c
		col.Cats = append(col.Cats, text)
	}
	t.params[k] = float64(c)
}

// nanSlice is n NaNs.
func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

// setValueB is setValue with the name as bytes, looked up without a copy.
func (ts *trialSet) setValueB(t *trial, name []byte, x float64) {
	k, ok := ts.vIndex[string(name)]
	if !ok {
		k = ts.valueIndex(string(name))
	}
	for len(t.values) <= k {
		t.values = append(t.values, math.NaN())
	}
	t.values[k] = x
}

func (ts *trialSet) setValue(t *trial, name string, x float64) {
	k := ts.valueIndex(name)
	for len(t.values) <= k {
		t.values = append(t.values, math.NaN())
	}
	t.values[k] = x
}

// number reads a stored number: a JSON number, "NaN"/"+Inf"/"-Inf", or a boolean as 0 or 1.
func number(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, false
	}
	switch raw[0] {
	case 't':
		return 1, string(raw) == "true"
	case 'f':
		return 0, string(raw) == "false"
	case '"':
		switch string(raw) {
		case `"NaN"`:
			return math.NaN(), true
		case `"+Inf"`, `"Inf"`:
			return math.Inf(1), true
		case `"-Inf"`:
			return math.Inf(-1), true
		}
		return 0, false
	case '[', '{', 'n':
		return 0, false
	}
	x, err := strconv.ParseFloat(string(raw), 64)
	return x, err == nil
}

// cellOutput is the part of a cell's output the trials are read from.
type cellOutput struct {
	Evaluations json.RawMessage              `json:"evaluations"`
	History     []map[string]json.RawMessage `json:"history"`
	Screenings  []struct {
		Score      json.RawMessage `json:"score"`
		Trained    bool            `json:"trained"`
		Objective  json.RawMessage `json:"val_objective"`
		TestMetric json.RawMessage `json:"test_metric"`
	} `json:"screenings"`
}

// repeatFields name a cell's repeat; they are never hyperparameters.
var repeatFields = []string{"repeat", "replicate"}

func (ts *trialSet) parse(c *store.Cell) *cellTrials {
	ct := &cellTrials{index: c.Index, key: c.Key, finished: c.Finished, repeat: -1, metrics: c.Outcome.Metrics}
	var cfg map[string]json.RawMessage
	json.Unmarshal(c.Config, &cfg) // a cell without a readable configuration is in no group
	var groups, numeric []string
	for name := range cfg {
		groups = append(groups, name)
	}
	sort.Strings(groups)
	var labels []string
	for _, name := range groups {
		raw := cfg[name]
		var text string
		if json.Unmarshal(raw, &text) == nil {
			if name == "method" {
				ct.method = text
			} else {
				labels = append(labels, text)
			}
			continue
		}
		if name == "hidden" {
			ct.hidden = string(bytes.TrimSpace(raw)) == "true"
			continue
		}
		if x, ok := number(raw); ok {
			if slices.Contains(repeatFields, name) {
				ct.repeat = int(x)
			} else {
				numeric = append(numeric, name)
			}
		}
	}
	ct.group = strings.Join(labels, "/")
	if ct.hidden {
		return ct // counted, not shown: its columns would be columns of no shown trial
	}
	// The output's members are found without decoding it whole: the evaluations, by far its
	// largest part, are read in place.
	var out cellOutput
	eachMember(c.Outcome.Output, skipSpace(c.Outcome.Output, 0), func(key, raw []byte) {
		switch string(key) {
		case "evaluations":
			out.Evaluations = raw
		case "history":
			json.Unmarshal(raw, &out.History) // another shape is no history
		case "screenings":
			json.Unmarshal(raw, &out.Screenings)
		}
	})
	if len(out.Evaluations) > 0 && out.Evaluations[0] == '[' { // an output of another shape has none
		var t trial
		start := func() {
			t = trial{cell: c.Index, order: len(ct.trials), params: nanSlice(len(ts.params)), values: nanSlice(len(ts.values))}
		}
		start()
		eachFlatObject(out.Evaluations, func(key, raw []byte) {
			if string(key) == "config" {
				s, _ := stringValue(raw)
				for _, f := range strings.Fields(s) {
					if p, v, ok := strings.Cut(f, "="); ok {
						ts.setParam(&t, p, v)
					}
				}
				return
			}
			if x, ok := number(raw); ok {
				ts.setValueB(&t, key, x)
			} else if len(raw) > 0 && raw[0] == '{' {
				// A record nested in the evaluation (run ahsc --whitebox's "whitebox"): its numbers
				// are columns named as the evaluations table names them, key_member.
				prefix := string(key) + "_"
				eachMember(raw, 0, func(k, r []byte) {
					if x, ok := number(r); ok {
						ts.setValue(&t, prefix+string(k), x)
					}
				})
			}
		}, func() {
			ct.trials = append(ct.trials, t)
			start()
		})
	} else {
		t := trial{cell: c.Index}
		for _, name := range numeric {
			ts.setParam(&t, name, strings.TrimSpace(string(cfg[name])))
		}
		names := make([]string, 0, len(c.Outcome.Metrics))
		for name := range c.Outcome.Metrics {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ts.setValue(&t, name, c.Outcome.Metrics[name])
		}
		ct.trials = []trial{t}
	}
	if out.History == nil && len(c.Outcome.History) > 0 {
		// The store's own per-step record, where the output has none.
		json.Unmarshal(c.Outcome.History, &out.History) // another shape is no history
	}
	for _, h := range out.History {
		step, ok := number(h["step"])
		if !ok {
			continue
		}
		if ct.curves == nil {
			ct.curves = map[string][]float64{}
		}
		n := len(ct.steps)
		ct.steps = append(ct.steps, step)
		for name, raw := range h {
			if x, ok := number(raw); ok && name != "step" {
				s := ct.curves[name]
				for len(s) < n {
					s = append(s, math.NaN())
				}
				ct.curves[name] = append(s, x)
			}
		}
	}
	for name, s := range ct.curves {
		for len(s) < len(ct.steps) {
			s = append(s, math.NaN())
		}
		ct.curves[name] = s
	}
	for _, s := range out.Screenings {
		sc := screening{Trained: s.Trained, Score: math.NaN(), Objective: math.NaN(), TestMetric: math.NaN()}
		if x, ok := number(s.Score); ok {
			sc.Score = x
		}
		if x, ok := number(s.Objective); ok {
			sc.Objective = x
		}
		if x, ok := number(s.TestMetric); ok {
			sc.TestMetric = x
		}
		ct.screenings = append(ct.screenings, sc)
	}
	return ct
}

// param is trial t's hyperparameter k (NaN when it has none).
func (t *trial) param(k int) float64 {
	if k < 0 || k >= len(t.params) {
		return math.NaN()
	}
	return t.params[k]
}

// value is trial t's value k (NaN when it has none).
func (t *trial) value(k int) float64 {
	if k < 0 || k >= len(t.values) {
		return math.NaN()
	}
	return t.values[k]
}
