package ahsc

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/store"
	"gorgonia.org/tensor"
)

// userSpaceYAML is a space for the OpenML MLP that Table 2's space (integers only, log10 of
// the learning rate in −5..0) mostly lies outside: a run that ignored it would be caught.
const userSpaceYAML = `# the MLP of a user's table, narrowed
parameters:
  - {name: depth, type: int, low: 1, high: 2}
  - {name: log2_width, type: categorical, choices: [3, 5]}
  - {name: log2_batch_size, type: int, low: 3, high: 4}
  - name: log10_learning_rate
    type: float
    low: -2.5
    high: -1.5
`

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// spaceFlags are a tiny run of two methods on iris as a user's table, in a user's space.
func spaceFlags(t *testing.T, dir string) map[string]string {
	t.Helper()
	data := filepath.Join(dir, "flowers.csv")
	writeIris(t, data, irisText)
	writeFile(t, filepath.Join(dir, "space.yaml"), userSpaceYAML)
	return map[string]string{"data": data, "target": "species", "space": filepath.Join(dir, "space.yaml"), "repeats": "1",
		"methods": "ahsc,random,tpe", "budget": "4", "n1": "4", "n2": "1", "epochs": "2"}
}

// parseStored reads a stored configuration ("depth=1 log2_width=5 …") back into space,
// refusing a value outside it.
func parseStored(space search.Space, text string) (search.Config, error) {
	values := map[string]string{}
	for _, kv := range strings.Fields(text) {
		k, v, _ := strings.Cut(kv, "=")
		values[k] = v
	}
	return ParseConfig(space, values)
}

// withSpace is a copy of flags with space set to path.
func withSpace(flags map[string]string, path string) map[string]string {
	out := map[string]string{"space": path}
	for k, v := range flags {
		if k != "space" {
			out[k] = v
		}
	}
	return out
}

func TestRunSearchesAUsersSpace(t *testing.T) {
	dir := t.TempDir()
	res := testRun(t, experiments.Options{Seed: 2}, spaceFlags(t, dir))
	sf, err := search.ReadSpaceFile(filepath.Join(dir, "space.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	evals := res.Table("evaluations")
	if evals == nil || len(evals.Rows) < 1+4+4 { // AHSC trains N2 = 1 (its screenings are elsewhere)
		t.Fatalf("evaluations: %v, want 9", evals)
	}
	fractional := false
	for i := range evals.Rows {
		hp, err := parseStored(sf.Space, evals.String(i, "config"))
		if err != nil {
			t.Fatalf("evaluation %d (%s) is not in the space: %v", i, evals.String(i, "method"), err)
		}
		lr := hp.Values[sf.Space.Index("log10_learning_rate")]
		fractional = fractional || lr != math.Trunc(lr)
	}
	if !fractional {
		t.Error("every learning rate is a power of ten: the float dimension was searched as Table 2's integer one")
	}
	runs := res.Table("runs")
	for i := range runs.Rows {
		if _, err := parseStored(sf.Space, runs.String(i, "config")); err != nil {
			t.Errorf("%s selected %q: %v", runs.String(i, "method"), runs.String(i, "config"), err)
		}
	}
	if s := res.Table("settings").String(0, "data"); !strings.Contains(s, "the space of space.yaml: depth int [1, 2]") {
		t.Errorf("the settings do not describe the space: %s", s)
	}
}

func TestSpaceRefusals(t *testing.T) {
	dir := t.TempDir()
	flags := spaceFlags(t, dir)
	bad := func(name, text string) string {
		path := filepath.Join(dir, name)
		writeFile(t, path, text)
		return path
	}
	head := "parameters:\n  - {name: depth, type: int, low: 1, high: 2}\n"
	cases := []struct {
		name  string
		flags map[string]string
		want  string
	}{
		{"syntax", withSpace(flags, bad("a.yaml", head+"  - {name: x, type: int\n")), "a.yaml:3: did not find expected"},
		{"unknown name", withSpace(flags, bad("b.yaml", head+"  - {name: layers, type: int, low: 1, high: 2}\n")),
			"b.yaml:3: layers: the OpenML MLP has no such hyperparameter (it reads depth, log2_width (or width)"},
		{"missing name", withSpace(flags, bad("c.yaml", head)), "c.yaml: log2_width: is missing"},
		{"float for an integer", withSpace(flags, bad("d.yaml", strings.Replace(userSpaceYAML, "type: int, low: 1", "type: float, low: 1", 1))),
			"d.yaml:3: depth.type: want int, or categorical with integer choices"},
		{"beyond the model", withSpace(flags, bad("e.yaml", strings.Replace(userSpaceYAML, "high: 2}", "high: 40}", 1))),
			"e.yaml:3: depth: 40 is outside [1, 16]"},
		{"word for a number", withSpace(flags, bad("f.yaml", strings.Replace(userSpaceYAML, "[3, 5]", "[3, wide]", 1))),
			`f.yaml:4: log2_width.choices: "wide": want an integer`},
		{"no such file", withSpace(flags, filepath.Join(dir, "none.yaml")), "none.yaml: no such file"},
		{"a paper dataset", map[string]string{"dataset": "iris", "space": flags["space"]}, "--space applies to --data"},
	}
	for _, c := range cases {
		cfg, err := Experiment().Configure(experiments.Quick, c.flags)
		if err == nil {
			_, err = Experiment().Resolve(experiments.Options{Config: cfg})
		}
		var fe *experiments.FlagError
		if err == nil || !errors.As(err, &fe) || fe.Flag != "space" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a --space error saying %q", c.name, err, c.want)
		}
	}
	// A trial takes a space for a paper dataset's model, but not the authors' protocol's.
	if _, err := TrialConfig(experiments.Quick, map[string]string{"dataset": "kc1", "space": flags["space"]}); err != nil {
		t.Errorf("a trial on kc1 in a space of the OpenML MLP: %v", err)
	}
	_, err := TrialConfig(experiments.Quick, map[string]string{"dataset": "kc1", "space": flags["space"], "protocol": "authors"})
	if err == nil || !strings.Contains(err.Error(), "does not apply to --protocol authors") {
		t.Errorf("a trial of the authors' protocol in a user's space: %v", err)
	}
}

// TestSpaceIdentity: a run without --space keeps its stored form (and so its identity); a
// resume whose space file now parses to another space is refused, one whose file was only
// rewritten (JSON for YAML, other comments) is not.
func TestSpaceIdentity(t *testing.T) {
	b, err := json.Marshal(defaultConfig(t, experiments.Quick))
	if err != nil || strings.Contains(string(b), `"space`) {
		t.Errorf("a run without --space stores %s (%v): want no space key", b, err)
	}
	dir := t.TempDir()
	flags := spaceFlags(t, dir)
	flags["methods"] = "random"
	e := Experiment()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := func(mode experiments.Mode) (*experiments.Status, error) {
		cfg, err := e.Configure(experiments.Quick, flags)
		if err != nil {
			t.Fatal(err)
		}
		return (&experiments.Runner{Store: st, Experiments: experiments.Registry{e}}).Start(ctx, e, experiments.Options{Seed: 1, Config: cfg}, mode)
	}
	sub, err := start(experiments.Mode{Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, flags["space"], strings.Replace(userSpaceYAML, "high: 4}", "high: 5}", 1))
	if _, err := start(experiments.Mode{Resume: true}); err == nil || !strings.Contains(err.Error(), "the space file "+flags["space"]+" changed") {
		t.Errorf("resuming in another space: %v, want a refusal naming the space file", err)
	}
	same := `{"parameters": [{"name": "depth", "type": "int", "low": 1, "high": 2},
	{"name": "log2_width", "type": "categorical", "choices": ["3", "5"]},
	{"name": "log2_batch_size", "type": "int", "low": 3, "high": 4},
	{"name": "log10_learning_rate", "type": "float", "low": -2.5, "high": -1.5}]}`
	writeFile(t, flags["space"], same)
	status, err := start(experiments.Mode{Resume: true})
	if err != nil || status.Run.ID != sub.Run.ID || status.Result == nil {
		t.Fatalf("resuming with the space rewritten as JSON: %+v, %v; want run %d finished", status, err, sub.Run.ID)
	}
}

// TestSpaceOnItsOwnScale: the OpenML MLP reads width, batch_size and learning_rate in place
// of Table 2's log2_width, log2_batch_size and log10_learning_rate, one of each pair.
func TestSpaceOnItsOwnScale(t *testing.T) {
	text := `parameters:
  - {name: depth, type: int, low: 1, high: 3}
  - {name: width, type: int, low: 8, high: 64, log: true}
  - {name: batch_size, type: categorical, choices: [10, 20]}
  - {name: learning_rate, type: float, low: 1e-4, high: 1e-1, log: true}
`
	hs, model := modelHypers("", true)
	sf, err := search.ParseSpaceFile("s.yaml", []byte(text))
	if err == nil {
		err = checkSpace(sf, hs, model)
	}
	if err != nil {
		t.Fatal(err)
	}
	hp, err := ParseConfig(sf.Space, map[string]string{"depth": "2", "width": "24", "batch_size": "20", "learning_rate": "0.003"})
	if err != nil {
		t.Fatal(err)
	}
	if hidden, batch := openMLArch(hp); !reflect.DeepEqual(hidden, []int{24, 24}) || batch != 20 {
		t.Errorf("openMLArch = %v, %d; want [24 24], 20", hidden, batch)
	}
	ds := &datasets.Dataset{N: 100, D: 4, Classes: []string{"a", "b"}}
	c, err := OpenMLBuild(2, tensor.Float64)(ds)(hp, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := c.Optimizer.(*samplers.Adam); !ok || a.LR != 0.003 || c.BatchSize != 20 {
		t.Errorf("optimizer %+v, batch %d; want Adam at 0.003, batch 20", c.Optimizer, c.BatchSize)
	}
	both := strings.Replace(text, "  - {name: batch_size", "  - {name: log2_width, type: int, low: 3, high: 6}\n  - {name: batch_size", 1)
	sf, err = search.ParseSpaceFile("s.yaml", []byte(both))
	if err == nil {
		err = checkSpace(sf, hs, model)
	}
	if err == nil || err.Error() != "s.yaml:4: log2_width: sets what width (line 3) sets: give one of them" {
		t.Errorf("width and log2_width: %v", err)
	}
}
