package skmlp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/internal/nprand"
)

var (
	pyOnce sync.Once
	pyPath string
)

// sklearnPython is a python3 that imports scikit-learn (Debian's python3-sklearn installs
// it for /usr/bin/python3; CI installs it), or the test skips saying why.
func sklearnPython(t *testing.T) string {
	t.Helper()
	pyOnce.Do(func() {
		for _, py := range []string{"/usr/bin/python3", "python3"} {
			if err := exec.Command(py, "-c", "import sklearn, numpy").Run(); err == nil {
				pyPath = py
				return
			}
		}
	})
	if pyPath == "" {
		t.Skip("python3 with scikit-learn is not available (apt-get install python3-sklearn): " +
			"the agreement with MLPClassifier is not checked")
	}
	return pyPath
}

// runPython runs script with in as JSON on its standard input and decodes its JSON output.
func runPython(py, script string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("python: %v\n%s", err, stderr.String())
	}
	return json.Unmarshal(res, out)
}

// The three tests' inputs go to one python process (importing scikit-learn takes seconds).
type (
	refInput struct {
		Fits   []skCase    `json:"fits"`
		Inits  []initCase  `json:"inits"`
		Splits []splitCase `json:"splits"`
	}
	refOutput struct {
		Fits   []skFit          `json:"fits"`
		Inits  [][][2][]float64 `json:"inits"`
		Splits []*[2][]int      `json:"splits"`
	}
)

var (
	refOnce sync.Once
	ref     refOutput
	refIn   refInput
	refErr  error
)

// reference is scikit-learn's answers to fitCases, initCases and splitCases.
func reference(t *testing.T) (refInput, refOutput) {
	t.Helper()
	py := sklearnPython(t)
	refOnce.Do(func() {
		if refIn.Fits, refErr = fitCases(); refErr != nil {
			return
		}
		refIn.Inits, refIn.Splits = initCases(), splitCases()
		script := "import json, sys, warnings\nimport numpy as np\nfrom sklearn.neural_network import MLPClassifier\n" +
			"from sklearn.model_selection import train_test_split\nref = json.load(sys.stdin)\n" +
			fitScript + initScript + splitScript + "print(json.dumps({\"fits\": fits, \"inits\": inits, \"splits\": splits}))\n"
		refErr = runPython(py, script, refIn, &ref)
	})
	if refErr != nil {
		t.Fatal(refErr)
	}
	return refIn, ref
}

type skCase struct {
	Name    string    `json:"name"`
	X       []float64 `json:"X"`
	Rows    int       `json:"rows"`
	D       int       `json:"d"`
	Y       []int     `json:"y"`
	Seed    uint32    `json:"seed"`
	Hidden  []int     `json:"hidden"`
	Alpha   float64   `json:"alpha"`
	Batch   int       `json:"batch"`
	LR      float64   `json:"lr"`
	MaxIter int       `json:"max_iter"`
	Shuffle bool      `json:"shuffle"`
	Tol     float64   `json:"tol"`
	Early   bool      `json:"early"`
	VF      float64   `json:"vf"`
	B1      float64   `json:"b1"`
	B2      float64   `json:"b2"`
	Eps     float64   `json:"eps"`
	Classes int       `json:"classes"`
}

func (c skCase) params() Params {
	return Params{Hidden: c.Hidden, Alpha: c.Alpha, BatchSize: c.Batch, LearningRateInit: c.LR, MaxIter: c.MaxIter,
		Shuffle: c.Shuffle, Tol: c.Tol, EarlyStopping: c.Early, ValidationFraction: c.VF, Beta1: c.B1, Beta2: c.B2,
		Epsilon: c.Eps, NIterNoChange: 10}
}

type skFit struct {
	LossCurve        []float64   `json:"loss_curve"`
	NIter            int         `json:"n_iter"`
	ValidationScores []float64   `json:"validation_scores"`
	Coefs            [][]float64 `json:"coefs"`
	Intercepts       [][]float64 `json:"intercepts"`
	Proba            []float64   `json:"proba"`
}

const fitScript = `fits = []
for c in ref["fits"]:
    X = np.array(c["X"], dtype=np.float64).reshape(c["rows"], c["d"])
    y = np.array(c["y"])
    clf = MLPClassifier(hidden_layer_sizes=c["hidden"], alpha=c["alpha"], batch_size=c["batch"],
        learning_rate_init=c["lr"], max_iter=c["max_iter"], shuffle=c["shuffle"], random_state=c["seed"],
        tol=c["tol"], early_stopping=c["early"], validation_fraction=c["vf"], beta_1=c["b1"],
        beta_2=c["b2"], epsilon=c["eps"], solver="adam")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    fits.append({"loss_curve": clf.loss_curve_, "n_iter": clf.n_iter_,
        "validation_scores": clf.validation_scores_ or [],
        "coefs": [w.ravel().tolist() for w in clf.coefs_],
        "intercepts": [b.tolist() for b in clf.intercepts_],
        "proba": clf.predict_proba(X).ravel().tolist()})
`

func embedded(name string, rows int) (x []float64, n, d int, y []int, classes int, err error) {
	ds, err := datasets.LoadEmbedded(name)
	if err != nil {
		return nil, 0, 0, nil, 0, err
	}
	n = min(rows, ds.N)
	return ds.X[:n*ds.D], n, ds.D, ds.Y[:n], len(ds.Classes), nil
}

// fitCases span Bayesmark's MLP-adam space: early stopping on and off (the validation
// accuracy and training loss rules, each stopping before max_iter), binary and multiclass,
// batches larger than the data (clipped), shuffling on and off, the space's extreme alpha,
// learning rate, β and ε, on the raw features of the four Bayesmark sets.
func fitCases() ([]skCase, error) {
	var err error
	mk := func(name, data string, rows int, seed uint32, mod func(*skCase)) skCase {
		x, n, d, y, k, e := embedded(data, rows)
		err = errors.Join(err, e)
		c := skCase{Name: name, X: x, Rows: n, D: d, Y: y, Classes: k, Seed: seed, Hidden: []int{50}, Alpha: 1e-4,
			Batch: 32, LR: 1e-3, MaxIter: 200, Shuffle: true, Tol: 1e-4, VF: 0.1, B1: 0.9, B2: 0.999, Eps: 1e-8}
		mod(&c)
		return c
	}
	cases := []skCase{
		mk("iris early", "iris", 150, 1, func(c *skCase) {
			c.Early, c.VF, c.Batch, c.LR, c.Alpha, c.Hidden = true, 0.25, 16, 1e-2, 1e-3, []int{64}
		}),
		mk("iris loss, batch>n", "iris", 150, 2, func(c *skCase) { c.Batch, c.LR, c.Tol, c.Hidden = 500, 3e-2, 1e-3, []int{120} }),
		mk("iris extremes", "iris", 150, 3, func(c *skCase) {
			c.Alpha, c.LR, c.Eps, c.B1, c.B2, c.Batch, c.MaxIter, c.Tol = 10, 0.1, 1e-9, 0.99, 1-1e-6, 10, 40, 1e-5
		}),
		mk("breast early", "breast", 569, 4, func(c *skCase) { c.Early, c.VF, c.Batch, c.Alpha, c.Hidden = true, 0.3, 64, 1, []int{80} }),
		mk("breast loss, unshuffled", "breast", 569, 5, func(c *skCase) { c.Shuffle, c.Batch, c.Tol, c.LR = false, 100, 1e-2, 1e-4 }),
		mk("wine early, batch>n", "wine", 178, 6, func(c *skCase) { c.Early, c.VF, c.Batch, c.Hidden, c.Tol, c.B1 = true, 0.5, 250, []int{200}, 1e-2, 0.5 }),
		mk("digits early", "digits", 400, 7, func(c *skCase) {
			c.Early, c.VF, c.Batch, c.Hidden, c.Alpha, c.MaxIter, c.Tol = true, 0.15, 10, []int{120}, 1e-5, 40, 1e-3
		}),
		mk("breast early, unshuffled", "breast", 569, 8, func(c *skCase) { c.Early, c.Shuffle, c.VF, c.Batch, c.LR = true, false, 0.8, 20, 1e-2 }),
		// tol 0: an epoch that ties the best accuracy resets the count (score < best + tol)
		mk("iris early, tol 0", "iris", 150, 10, func(c *skCase) { c.Early, c.VF, c.Tol, c.MaxIter, c.Batch = true, 0.2, 0, 60, 20 }),
		mk("wine loss, two layers", "wine", 178, 9, func(c *skCase) { c.Hidden, c.Batch, c.LR, c.Tol = []int{60, 30}, 40, 1e-3, 1e-3 }),
	}
	return cases, err
}

// TestAgainstScikitLearn fits fitCases here and with scikit-learn's
// MLPClassifier(random_state=seed): the same initial weights, validation split and batch
// order follow from the seed (TestInitAgainstScikitLearn, TestSplitAgainstScikitLearn), and
// every epoch's training loss must agree to 1e-9, the validation accuracies exactly, the
// stopping epoch exactly, and the final (restored) weights and probabilities to 1e-6.
func TestAgainstScikitLearn(t *testing.T) {
	in, sk := reference(t)
	cases := in.Fits
	if len(sk.Fits) != len(cases) {
		t.Fatalf("%d results for %d cases", len(sk.Fits), len(cases))
	}
	stopped := map[bool]int{}
	for i, c := range cases {
		want := sk.Fits[i]
		got, err := Fit(context.Background(), c.params(), c.Seed, c.X, c.Rows, c.D, c.Y, c.Classes)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if got.NIter != want.NIter {
			t.Errorf("%s: stopped after %d epochs, scikit-learn after %d", c.Name, got.NIter, want.NIter)
		}
		if got.NIter < c.MaxIter {
			stopped[c.Early]++
		}
		worst := 0.0
		for e := range min(len(got.LossCurve), len(want.LossCurve)) {
			d := math.Abs(got.LossCurve[e]-want.LossCurve[e]) / max(1, math.Abs(want.LossCurve[e]))
			worst = max(worst, d)
			if d > 1e-9 {
				t.Errorf("%s: epoch %d loss %.17g, scikit-learn %.17g", c.Name, e+1, got.LossCurve[e], want.LossCurve[e])
				break
			}
		}
		if !slices.Equal(got.ValidationScores, want.ValidationScores) {
			t.Errorf("%s: validation accuracies %v, scikit-learn %v", c.Name, got.ValidationScores, want.ValidationScores)
		}
		wd := 0.0
		for l := range want.Coefs {
			wd = max(wd, maxRelDiff(got.Net.Coefs[l], want.Coefs[l]), maxRelDiff(got.Net.Intercepts[l], want.Intercepts[l]))
		}
		pd := maxRelDiff(got.Net.PredictProba(c.X, c.Rows), want.Proba)
		if wd > 1e-6 || pd > 1e-6 {
			t.Errorf("%s: final weights differ by %.3g, probabilities by %.3g (relative)", c.Name, wd, pd)
		}
		t.Logf("%-26s %3d epochs (max %3d), worst loss difference %.2g, weights %.2g", c.Name, got.NIter, c.MaxIter, worst, wd)
	}
	// Each stopping rule must have fired before max_iter somewhere, or a change to it could
	// pass unnoticed.
	if stopped[true] == 0 || stopped[false] == 0 {
		t.Errorf("configurations stopped early: %d with early stopping, %d without; want both > 0", stopped[true], stopped[false])
	}
}

func maxRelDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i])/max(1, math.Abs(b[i])))
	}
	return d
}

type initCase struct {
	Seed  uint32 `json:"seed"`
	Units []int  `json:"units"`
}

func initCases() []initCase {
	return []initCase{{0, []int{4, 50, 3}}, {12345, []int{30, 200, 1}}, {4294967295, []int{64, 120, 77, 10}}}
}

const initScript = `inits = []
for c in ref["inits"]:
    m = MLPClassifier()
    m._random_state = np.random.RandomState(c["seed"])
    u = c["units"]
    layers = [m._init_coef(u[i], u[i + 1], np.float64) for i in range(len(u) - 1)]
    inits.append([[w.ravel().tolist(), b.tolist()] for w, b in layers])
`

// TestInitAgainstScikitLearn checks Init's draws against _init_coef's, bit for bit, for
// binary and multiclass networks of one and two hidden layers.
func TestInitAgainstScikitLearn(t *testing.T) {
	in, sk := reference(t)
	for i, c := range in.Inits {
		u := c.Units
		classes := u[len(u)-1]
		if classes == 1 {
			classes = 2
		}
		net := Init(nprand.New(c.Seed), u[0], u[1:len(u)-1], classes)
		for l := range sk.Inits[i] {
			if !slices.Equal(net.Coefs[l], sk.Inits[i][l][0]) || !slices.Equal(net.Intercepts[l], sk.Inits[i][l][1]) {
				t.Errorf("seed %d, units %v, layer %d: the initial weights differ from _init_coef's", c.Seed, u, l)
			}
		}
	}
}

type splitCase struct {
	Seed  uint32  `json:"seed"`
	Frac  float64 `json:"frac"`
	Y     []int   `json:"y"`
	Strat bool    `json:"strat"`
}

// splitCases: balanced, unbalanced and tiny label sets (ties of _approximate_mode, and
// splits scikit-learn refuses), stratified or not, at Bayesmark's range of fractions.
func splitCases() []splitCase {
	var cases []splitCase
	ys := [][]int{make([]int, 37), make([]int, 120), make([]int, 11)}
	for i := range ys[0] {
		ys[0][i] = i % 2
	}
	for i := range ys[1] {
		ys[1][i] = min(i%7, 1) // 1:6
	}
	for i := range ys[2] {
		ys[2][i] = i % 2
	}
	for s, y := range ys {
		for _, f := range []float64{0.1, 0.2689414213699951, 0.5, 0.9} {
			for _, strat := range []bool{true, false} {
				cases = append(cases, splitCase{uint32(s*31 + int(f*100)), f, y, strat})
			}
		}
	}
	return cases
}

const splitScript = `splits = []
for c in ref["splits"]:
    y = np.array(c["y"]).reshape(-1, 1).astype(bool)
    try:
        tr, te = train_test_split(np.arange(len(y)), random_state=np.random.RandomState(c["seed"]),
            test_size=c["frac"], stratify=y if c["strat"] else None)
        splits.append([tr.tolist(), te.tolist()])
    except ValueError:
        splits.append(None)
`

// TestSplitAgainstScikitLearn checks the early-stopping split against train_test_split
// with the same RandomState: StratifiedShuffleSplit (binary: MLPClassifier stratifies a
// single output column) and ShuffleSplit (multiclass).
func TestSplitAgainstScikitLearn(t *testing.T) {
	in, sk := reference(t)
	refused := 0
	for i, c := range in.Splits {
		var strat []int
		if c.Strat {
			strat = c.Y
		}
		tr, te, err := trainTestSplit(nprand.New(c.Seed), len(c.Y), c.Frac, strat)
		if sk.Splits[i] == nil {
			refused++
			if err == nil {
				t.Errorf("case %d (%d rows, %v, stratified %v): no error; scikit-learn refuses", i, len(c.Y), c.Frac, c.Strat)
			}
			continue
		}
		if err != nil || !slices.Equal(tr, sk.Splits[i][0]) || !slices.Equal(te, sk.Splits[i][1]) {
			t.Errorf("case %d (%d rows, %v, stratified %v): %v %v (%v), scikit-learn %v %v", i, len(c.Y), c.Frac, c.Strat, tr, te, err, sk.Splits[i][0], sk.Splits[i][1])
		}
	}
	t.Logf("%d splits, %d refused by both", len(in.Splits), refused)
}
