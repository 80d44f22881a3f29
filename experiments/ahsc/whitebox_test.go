package ahsc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"gorgonia.org/tensor"
)

// whiteboxConfig is the quick preset with --whitebox and rule.
func whiteboxConfig(t *testing.T, rule string) *Config {
	t.Helper()
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Whitebox, cfg.Select, cfg.Zeta = true, rule, 0.05
	if err := cfg.Finish(experiments.Quick); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestWhiteboxCells: with --whitebox every full-fidelity evaluation of every method carries
// a record, the lower rungs none; the cell stores both rules' choices, each the one its rule
// picks from the stored evaluations; the stored cell reads back to the same record, replays
// from the journal with it, and a cell stored before the record reads as having none.
func TestWhiteboxCells(t *testing.T) {
	p, sp := blobsProblem()
	for _, method := range []string{"random", "ahsc", "bohb"} {
		for _, rule := range []string{"validation", "eq7"} {
			cfg := whiteboxConfig(t, rule)
			cp := &recordingCheckpoint{}
			ctx := experiments.WithCheckpoint(context.Background(), cp)
			r, err := runOne(ctx, p, sp, cfg, method, 0, seeds{weights: 1, search: 2}, limits{}, 1)
			if err != nil || r.err != "" {
				t.Fatalf("%s: %v %s", method, err, r.err)
			}
			var evals []convexity.Evaluation
			for _, e := range r.evals {
				if (e.wb != nil) != (e.fullFidelity() && !e.failed) {
					t.Fatalf("%s: evaluation at fidelity %v (failed %v) has record %v", method, e.fidelity, e.failed, e.wb)
				}
				if e.wb != nil && (math.IsNaN(e.wb.Eq7) || e.wb.Iterates < 1 || e.wb.Probes != convexity.DefaultProbes) {
					t.Fatalf("%s: record %+v", method, *e.wb)
				}
				ce := convexity.Evaluation{Fidelity: e.fidelity, ValLoss: e.valLoss, Whitebox: e.wb}
				if e.failed {
					ce.Err = errDummy
				}
				evals = append(evals, ce)
			}
			if len(r.selections) != 2 || r.selections[0].Rule != "validation" || r.selections[1].Rule != "eq7" {
				t.Fatalf("%s: selections %+v", method, r.selections)
			}
			i, score, err := convexity.Select(evals, convexity.ByEq7, 0.05)
			if err != nil || r.selections[1].Config != r.evals[i].config || float64(r.selections[1].Score) != score {
				t.Errorf("%s: stored eq7 choice %+v; Select picks %s at %v (%v)", method, r.selections[1], r.evals[i].config, score, err)
			}
			want := r.selections[0]
			if rule == "eq7" {
				want = r.selections[1]
			}
			if r.config != want.Config || r.testMetric != float64(want.TestMetric) {
				t.Errorf("%s under --select %s: returned %s (test %v), want %s", method, rule, r.config, r.testMetric, want.Config)
			}
			b, err := json.Marshal(r.toJSON())
			if err != nil {
				t.Fatal(err)
			}
			var j runJSON
			if err := json.Unmarshal(b, &j); err != nil {
				t.Fatal(err)
			}
			back := j.run()
			for k, e := range back.evals {
				if (e.wb == nil) != (r.evals[k].wb == nil) || e.wb != nil && *e.wb != *r.evals[k].wb {
					t.Fatalf("%s: evaluation %d's record did not survive the cell's JSON", method, k)
				}
			}
			// Replayed from the journal, the cell stores the same records.
			again, err := runOne(experiments.WithCheckpoint(context.Background(), &recordingCheckpoint{saved: cp.saves[len(cp.saves)-1]}),
				p, sp, cfg, method, 0, seeds{weights: 1, search: 2}, limits{}, 1)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(withoutSeconds(again.toJSON()))
			w, _ := json.Marshal(withoutSeconds(r.toJSON()))
			if string(a) != string(w) {
				t.Errorf("%s: the replayed cell differs from the computed one", method)
			}
			// A cell without records (stored before --whitebox) reads as none.
			old := strings.NewReplacer(`"whitebox":`, `"ignored":`).Replace(string(b))
			var oj runJSON
			if err := json.Unmarshal([]byte(old), &oj); err != nil {
				t.Fatal(err)
			}
			for _, e := range oj.run().evals {
				if e.wb != nil {
					t.Fatalf("%s: a cell without records read as having one", method)
				}
			}
		}
	}
}

// errDummy marks a failed evaluation for convexity.Select.
var errDummy = errorString("failed")

type errorString string

func (e errorString) Error() string { return string(e) }

func withoutSeconds(j runJSON) runJSON {
	j.Seconds = 0
	for i := range j.Evals {
		if j.Evals[i].Whitebox != nil {
			w := *j.Evals[i].Whitebox
			w.Seconds = 0
			j.Evals[i].Whitebox = &w
		}
	}
	return j
}

// TestWhiteboxFlags: --select eq7 needs --whitebox; a run without --whitebox keeps the
// identity of runs stored before the flags (no white-box key in its options).
func TestWhiteboxFlags(t *testing.T) {
	cfg := defaultConfig(t, experiments.Quick)
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"whitebox", "select", "zeta"} {
		if strings.Contains(string(b), `"`+key) {
			t.Errorf("a run without --whitebox stores %s in its options: %s", key, b)
		}
	}
	cfg.Select = "eq7"
	if err := cfg.Finish(experiments.Quick); err == nil {
		t.Error("--select eq7 without --whitebox accepted")
	}
	for _, bad := range []func(c *Config){
		func(c *Config) { c.Zeta = -1 },
		func(c *Config) { c.Zeta = math.NaN() },
		func(c *Config) { c.WhiteboxProbes = 1 },
		func(c *Config) { c.WhiteboxStride = -2 },
		func(c *Config) { c.Select = "test" },
	} {
		c := defaultConfig(t, experiments.Quick)
		c.Whitebox = true
		bad(c)
		if err := c.Finish(experiments.Quick); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

// TestWhiteboxFollowsTheSklearnModel: scikit-learn's MLP, which trains by its own loop
// (package skmlp), reports its iterates to the record (Candidate.Trajectory), which then
// has a regularizer, and recording leaves its fit as it was.
func TestWhiteboxFollowsTheSklearnModel(t *testing.T) {
	_, sp := blobsProblem()
	hp, err := ParseConfig(AuthorsBayesmarkSpace(), map[string]string{"hidden_layer_sizes": "50", "alpha": "0.01", "batch_size": "10",
		"learning_rate_init": "0.01", "tol": "0.0001", "logit_validation_fraction": "-1.5", "logit_beta_1": "2", "logit_beta_2": "5", "epsilon": "1e-8"})
	if err != nil {
		t.Fatal(err)
	}
	task := &convexity.Task{Space: AuthorsBayesmarkSpace(), Build: SklearnBayesmarkBuild(2, tensor.Float64)(sp.train),
		Train: sp.train, Val: sp.val, Test: sp.test, Loss: losses.Binary, Metric: convexity.AUC, Epochs: 20, Seed: 1}
	plain := task.Evaluate(context.Background(), hp, 1)
	task.Whitebox = &convexity.WhiteboxOptions{Stride: 1}
	e := task.Evaluate(context.Background(), hp, 1)
	if plain.Err != nil || e.Err != nil {
		t.Fatal(plain.Err, e.Err)
	}
	w := e.Whitebox
	if w == nil || w.Iterates < 2 || !(w.Eq7 > 0) || math.IsInf(w.Eq7, 0) {
		t.Fatalf("record %+v; want a finite regularizer over the sklearn fit's steps", w)
	}
	if e.TestMetric != plain.TestMetric || e.ValLoss != plain.ValLoss {
		t.Errorf("recording changed the sklearn fit: test %v → %v, validation loss %v → %v", plain.TestMetric, e.TestMetric, plain.ValLoss, e.ValLoss)
	}
}

// TestWhiteboxWorkerIndependent: the records and both rules' choices of a quick --whitebox
// run are the same, bit for bit, with 1 and 2 workers (the AHSC cells train in parallel).
func TestWhiteboxWorkerIndependent(t *testing.T) {
	flags := map[string]string{"dataset": "iris", "methods": "ahsc,random", "whitebox": "true"}
	res1 := testRun(t, experiments.Options{Seed: 5, Workers: 1, DataDir: t.TempDir()}, flags)
	res2 := testRun(t, experiments.Options{Seed: 5, Workers: 2, DataDir: t.TempDir()}, flags)
	for _, name := range []string{"evaluations", "selections"} {
		a := withoutColumns(t, res1.Table(name), "whitebox_seconds")
		b := withoutColumns(t, res2.Table(name), "whitebox_seconds")
		if len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: %d rows with 1 worker, %d with 2, or they differ", name, len(a), len(b))
		}
	}
}

// TestWhiteboxEigenMethodReads: a stored record keeps its eigenvalue's method, and one stored
// before the method was (power iteration's records) reads as power iteration.
func TestWhiteboxEigenMethodReads(t *testing.T) {
	w := &convexity.Whitebox{Mu: 1, Trace: 2, Probes: 4, TopEigenvalue: 3, EigenMethod: convexity.EigenLanczos, PowerIters: 10, PowerTol: 1e-3}
	b, err := json.Marshal(whiteboxToJSON(w))
	if err != nil {
		t.Fatal(err)
	}
	var j whiteboxJSON
	if err := json.Unmarshal(b, &j); err != nil || *j.whitebox() != *w {
		t.Fatalf("%s read back as %+v (%v)", b, j.whitebox(), err)
	}
	old := strings.Replace(string(b), `"eigen_method":"lanczos",`, "", 1)
	if old == string(b) {
		t.Fatalf("no eigen_method in %s", b)
	}
	var o whiteboxJSON
	if err := json.Unmarshal([]byte(old), &o); err != nil || o.whitebox().EigenMethod != convexity.EigenPower || o.whitebox().TopEigenvalue != 3 {
		t.Errorf("a record without a method %s read as %+v (%v)", old, o.whitebox(), err)
	}
	if v := whiteboxValues(w); v[len(v)-1] != convexity.EigenLanczos || whiteboxColumns[len(v)-1] != "whitebox_eigen_method" {
		t.Errorf("the evaluations table's last record column %s = %v", whiteboxColumns[len(v)-1], v[len(v)-1])
	}
}

// TestRecordCost: the answer's sentence and the runtime table's columns sum the records'
// seconds against the rest of the searches' (hand-made runs: random on toy 2 repeats of 1 s
// with records of 0.1 + 0.1 s each, AHSC 1 repeat of 0.6 s with one of 0.1 s; the Bayesmark
// reference's hidden run and a failed evaluation without a record are not counted).
func TestRecordCost(t *testing.T) {
	rec := func(s float64) eval { return eval{fidelity: 1, wb: &convexity.Whitebox{Seconds: s}} }
	runs := []run{
		{dataset: "toy", repeat: 0, method: "random", seconds: 1, evals: []eval{rec(0.1), rec(0.1), {failed: true}}},
		{dataset: "toy", repeat: 1, method: "random", seconds: 1, evals: []eval{rec(0.1), rec(0.1)}},
		{dataset: "toy", repeat: 0, method: "ahsc", seconds: 0.6, evals: []eval{rec(0.1)}},
		{dataset: "toy", repeat: 0, method: "random", hidden: true, seconds: 9, evals: []eval{rec(5)}},
	}
	// random: 0.4 of 2 s, 0.4/1.6 = 25%; ahsc: 0.1/0.5 = 20%; all: 0.5/2.1 = 24%, 100 ms a record.
	want := "The white-box records took 24% of the rest of the searches' time (100.0 ms each, 5 records; most on toy / random, 25%; table runtime)."
	if got := recordCostSentence(runs); got != want {
		t.Errorf("recordCostSentence:\n got %q\nwant %q", got, want)
	}
	if got := recordCostSentence(runs[3:]); got != "" {
		t.Errorf("a hidden run's records gave %q", got)
	}
	rows := []summaryRow{{dataset: "toy", method: "random", seconds: 1}, {dataset: "toy", method: "ahsc", seconds: 0.6}}
	tab := runtimeTable([]*problem{{name: "toy"}}, rows, runs)
	if tab.Column("record_share") < 0 || math.Abs(tab.Float(0, "record_share")-0.25) > 1e-12 ||
		math.Abs(tab.Float(0, "record_seconds")-0.2) > 1e-12 || math.Abs(tab.Float(1, "record_share")-0.2) > 1e-12 {
		t.Errorf("runtime table %v: %v", tab.Columns, tab.Rows)
	}
	if tab := runtimeTable([]*problem{{name: "toy"}}, rows, nil); tab.Column("record_share") >= 0 {
		t.Errorf("a run without records has the record's columns: %v", tab.Columns)
	}
}

// TestMaxMemCountsTheRecord: with --whitebox a trial's estimate (--max-mem) adds the white-box
// record's, on the OpenML MLPs and the convnets, and a limit between the two refuses the
// configuration with a reason naming the record; without --whitebox the same limit lets it
// through, and the folds' trainings, which record nothing, never count it.
func TestMaxMemCountsTheRecord(t *testing.T) {
	p, sp := blobsProblem()
	p.estimate = mlpEstimate(2, p.dtype, openMLArch)
	sp.folds = []fold{{train: sp.train, early: sp.val, val: sp.val}}
	hp, err := ParseConfig(p.space, map[string]string{"depth": "2", "log2_width": "4", "log2_batch_size": "3", "log10_learning_rate": "-2"})
	if err != nil {
		t.Fatal(err)
	}
	plain := defaultConfig(t, experiments.Quick)
	if err := plain.Finish(experiments.Quick); err != nil {
		t.Fatal(err)
	}
	recorded := whiteboxConfig(t, "")
	training, err := newTask(p, sp, plain, 1, limits{}).Estimate(hp)
	if err != nil {
		t.Fatal(err)
	}
	with, err := newTask(p, sp, recorded, 1, limits{}).Estimate(hp)
	if err != nil || with <= training {
		t.Fatalf("estimate with the record %d B (%v), without %d B", with, err, training)
	}
	lim := limits{maxMem: (training + with) / 2}
	task := newTask(p, sp, recorded, 1, lim)
	err = task.CheckMemory(hp)
	if !errors.Is(err, convexity.ErrTooBig) || !strings.Contains(err.Error(), "white-box record") || !strings.Contains(err.Error(), "--whitebox") {
		t.Errorf("a recorded trial over the limit: %v", err)
	}
	if err := task.Folds[0].CheckMemory(hp); err != nil {
		t.Errorf("a fold, which records nothing: %v", err)
	}
	if err := newTask(p, sp, plain, 1, lim).CheckMemory(hp); err != nil {
		t.Errorf("the trial without the record: %v", err)
	}

	img, err := ParseConfig(MNISTSpace(), map[string]string{"filters": "4", "kernel": "3", "padding": "same", "blocks": "2"})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(batch int) (layers.RecordRows, error) {
		return layers.RecordRows{Train: 256, Val: 256, N: 54000, Batch: batch}, nil
	}
	conv, err := convNetBytes("mnist", []int{1, 28, 28}, 10, tensor.Float32, img, nil)
	if err != nil {
		t.Fatal(err)
	}
	convWith, err := convNetBytes("mnist", []int{1, 28, 28}, 10, tensor.Float32, img, rows)
	if err != nil || convWith <= conv {
		t.Errorf("mnist convnet: with the record %d B (%v), without %d B", convWith, err, conv)
	}
}
