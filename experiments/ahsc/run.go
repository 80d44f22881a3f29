package ahsc

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/train"
)

// failure is a failed evaluation or screening and why it failed.
type failure struct {
	Stage  string `json:"stage"` // "trial", "fidelity 0.33" (a BOHB rung), or "screening"
	Config string `json:"config"`
	Reason string `json:"reason"`
}

// eval is one evaluation of the objective: a full training, or one of BOHB's lower rungs
// (fidelity < 1, no test scores).
type eval struct {
	config                       string
	fidelity                     float64
	valMetric, valLoss           float64
	testMetric, testAcc, testNLL float64
	failed                       bool
	wb                           *convexity.Whitebox // the white-box record (--whitebox), or nil
}

// fullFidelity reports whether e trained a configuration in full: the calls Bayesmark's
// scores, Table 1 and the selection read (BOHB's lower rungs are the others).
func (e eval) fullFidelity() bool { return e.fidelity >= 1 }

// fullEvals keeps the full-fidelity evaluations of es, in order.
func fullEvals(es []eval) []eval {
	var out []eval
	for _, e := range es {
		if e.fullFidelity() {
			out = append(out, e)
		}
	}
	return out
}

// run is one method's search on one repeat of one dataset.
type run struct {
	dataset string
	repeat  int
	method  string
	group   group
	hidden  bool // the Bayesmark random reference, not a requested method
	seconds float64

	config                       string  // the selected configuration
	objective                    float64 // its validation objective
	testMetric, testAcc, testNLL float64 // its test results
	value                        float64 // what the summary compares (visible Bayesmark score, AUC, accuracy %)
	genScore                     float64 // Bayesmark's generalization score (NaN elsewhere)

	evals      []eval      // every evaluation, lower fidelities and failed ones too, in order
	calls      int         // objective calls (all fidelities)
	failed     int         // failed objective calls
	screened   int         // AHSC: configurations screened
	screenLost int         // AHSC: screenings dropped (failure or μ ≤ 0)
	screenings []screening // AHSC: every screening, with the trained ones' results
	selections []selection // --whitebox: what each selection rule returned
	failures   []failure
	err        string // why the run selected nothing
}

// seeds are a cell's random streams, derived by hashing from the cell's seed (repeatSeed).
type seeds struct {
	weights uint64 // the repeat's initial weights (and batch orders), shared by every method
	search  uint64 // the method's stream: its samples, and AHSC's Hessian probes
}

// repeatSeed is the seed of one repeat of a dataset, the seed of its cells: the repeat's
// split, initial weights and every method's stream derive from it.
func repeatSeed(root uint64, dataset string, repeat int) uint64 {
	return experiments.DeriveSeed(root, "ahsc", dataset, "repeat", repeat)
}

// cellSeeds derives a method's streams from its repeat's seed. The AHSC variants share one
// search stream, so that they screen the same N1 configurations and differ only in how they
// rank them.
func cellSeeds(repeat uint64, method string) seeds {
	stream := method
	if strings.HasPrefix(method, "ahsc") {
		stream = "ahsc"
	}
	return seeds{
		weights: experiments.DeriveSeed(repeat, "weights"),
		search:  experiments.DeriveSeed(repeat, "method", stream),
	}
}

// limits are the resource limits of every trial (--max-mem, --trial-timeout).
type limits struct {
	maxMem  int64
	timeout time.Duration
}

// newTask is the objective every method of a repeat evaluates through: train on the
// repeat's training split from the repeat's initial weights for up to the problem's epochs
// with early stopping on the validation loss, and score on the validation split — or, on
// Bayesmark's sets, cross-validate on the folds and minimize the log loss.
func newTask(p *problem, sp *split, cfg *Config, weights uint64, lim limits) *convexity.Task {
	task := &convexity.Task{
		Space: p.space, Build: p.build(sp.train), Train: sp.train, Val: sp.val, Test: sp.test,
		Loss: p.loss, Metric: p.metric, Epochs: p.epochs, Seed: weights, ByLoss: p.group == bayesmark,
		Early:     &train.EarlyStopping{Monitor: "val_loss", Patience: cfg.Patience, MinDelta: cfg.MinDelta},
		EvalBatch: p.evalBatch, MaxBytes: lim.maxMem, TrialTimeout: lim.timeout,
		Data: &train.DataCache{},
	}
	var record recordRows
	if cfg.Whitebox {
		o := cfg.whiteboxOptions()
		task.Whitebox = &o
		record = task.RecordRows // --max-mem counts the record the full trainings make
	}
	task.Estimate = p.estimate(sp.train, record)
	for _, f := range sp.folds {
		task.Folds = append(task.Folds, &convexity.Task{
			Space: p.space, Build: p.build(f.train), Train: f.train, EarlyStop: f.early, Val: f.val,
			Loss: p.loss, Metric: p.metric, Epochs: p.epochs, Seed: weights, Early: task.Early,
			EvalBatch: p.evalBatch, MaxBytes: lim.maxMem, Estimate: p.estimate(f.train, nil), TrialTimeout: lim.timeout,
			Data: task.Data,
		})
	}
	return task
}

// observe is the task's Observe hook: it records every evaluation into r.
func (r *run) observe(e convexity.Evaluation) {
	r.calls++
	ev := eval{config: e.Config.String(), fidelity: e.Fidelity, failed: e.Err != nil,
		valMetric: e.ValMetric, valLoss: e.ValLoss, testMetric: e.TestMetric, testAcc: e.TestAccuracy, testNLL: e.TestLoss, wb: e.Whitebox}
	if e.Err != nil {
		r.failed++
		stage := "trial"
		if !ev.fullFidelity() {
			stage = fmt.Sprintf("fidelity %.2g", e.Fidelity)
		}
		r.failures = append(r.failures, failure{stage, ev.config, e.Err.Error()})
	}
	r.evals = append(r.evals, ev)
}

// searchWith runs one method through obj, the task's objective (journaled); the AHSC
// variants also return their screenings.
func searchWith(ctx context.Context, method string, task *convexity.Task, obj search.Objective, cfg *Config, rng *rand.Rand, budget, workers int) ([]search.Trial, []convexity.Screened, error) {
	var m search.Method
	switch method {
	case "ahsc", "ahsc-valloss", "ahsc-hessian":
		a := &convexity.AHSC{Task: task, N1: cfg.N1, N2: cfg.N2, Workers: workers}
		switch method {
		case "ahsc-valloss":
			a.Rank = convexity.ByValLoss
		case "ahsc-hessian":
			a.Rank = convexity.ByHessian
		}
		res, err := a.Run(ctx, rng, task.Space, obj)
		return res.Trials, res.Screenings, err
	case "ahsc-bbo":
		return bboSearch(ctx, task.Space, obj, rng, workers, cfg.adamForm, cfg.bboReduce())
	case bohbAuthors:
		trials, err := authorsBOHBSearch(ctx, task.Space, obj, rng, task.Epochs)
		return trials, nil, err
	case "random":
		m = search.Sequential{Label: "random", Sampler: search.Random{}}
	case "tpe":
		m = search.Sequential{Label: "tpe", Sampler: search.TPE{NStartup: cfg.TPEStartup}}
	case "bohb":
		m = search.BOHB{}
	case "hebo":
		m = search.HEBO{}
	case "turbo":
		m = search.TuRBO{}
	default:
		return nil, nil, fmt.Errorf("ahsc: unknown method %q", method)
	}
	trials, err := m.Search(ctx, rng, task.Space, obj, budget)
	return trials, nil, err
}

// runOne runs one method on one repeat: the search, then the selection of its best
// full-fidelity trial on validation data (search.Best) with that trial's test results.
func runOne(ctx context.Context, p *problem, sp *split, cfg *Config, method string, repeat int, sd seeds, lim limits, workers int) (run, error) {
	r := run{dataset: p.name, group: p.group, repeat: repeat, method: method, objective: math.NaN(), testMetric: math.NaN(),
		testAcc: math.NaN(), testNLL: math.NaN(), value: math.NaN(), genScore: math.NaN()}
	task := newTask(p, sp, cfg, sd.weights, lim)
	if cfg.Protocol == protocolAuthors && p.group != user {
		authorsTask(task, p, method, sd.weights)
		if p.group == bayesmark && cfg.N1 > authorsBayesmarkCalls {
			c := *cfg
			c.N2 = authorsBayesmarkCalls
			cfg = &c
		}
	}
	task.Observe = r.observe // searches evaluate one configuration at a time
	algorithm := method
	if method == "bohb" && cfg.Protocol == protocolAuthors && p.group == openML {
		algorithm = bohbAuthors
	}
	j := newJournal(ctx, task)
	trials, screenings, err := searchWith(ctx, algorithm, task, j.objective, cfg, rand.New(rand.NewPCG(sd.search, 0)), p.budget, workers)
	r.seconds = j.seconds()
	r.screened = len(screenings)
	for _, s := range screenings {
		if s.Reason != "" {
			r.screenLost++
			r.failures = append(r.failures, failure{"screening", s.Config.String(), s.Reason})
		}
	}
	if screenings != nil {
		r.matchScreenings(screenings, trials)
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if err == nil {
		err = r.selectBest(trials, cfg)
	}
	if err != nil {
		r.err = err.Error()
	}
	return r, nil
}

// selectBest records the selected trial and its test results: search.Best's, or with
// --whitebox the one cfg.Select names, both rules' choices kept (selectBoth).
func (r *run) selectBest(trials []search.Trial, cfg *Config) error {
	var s selection
	if cfg.Whitebox {
		var err error
		if s, err = r.selectBoth(trials, cfg.Select, cfg.Zeta); err != nil {
			return err
		}
	} else {
		best, err := search.Best(trials)
		if err != nil {
			return err
		}
		e, ok := r.lastEval(best.Config.String())
		if !ok {
			return fmt.Errorf("the selected configuration has no full-fidelity record")
		}
		s = selection{Config: e.config, Score: f64(best.Value), TestMetric: f64(e.testMetric), TestAcc: f64(e.testAcc), TestNLL: f64(e.testNLL)}
	}
	r.config, r.objective = s.Config, float64(s.Score)
	r.testMetric, r.testAcc, r.testNLL = float64(s.TestMetric), float64(s.TestAcc), float64(s.TestNLL)
	switch r.group {
	case image:
		r.value = 100 * r.testMetric
	case bayesmark:
		// set by bayesmarkScores once every method has run
	default:
		r.value = r.testMetric
	}
	return nil
}

// lastEval is the latest successful full-fidelity evaluation of a configuration.
func (r *run) lastEval(config string) (eval, bool) {
	for i := len(r.evals) - 1; i >= 0; i-- {
		if e := r.evals[i]; e.config == config && !e.failed && e.fullFidelity() {
			return e, true
		}
	}
	return eval{}, false
}
