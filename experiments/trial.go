package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/search"
)

// Metric is one named number of a trial.
type Metric struct {
	Name  string
	Value float64
}

// TrialSpace is a dataset's search space in the ahsc experiment: the dimensions a trial's
// configuration sets.
func TrialSpace(preset, dataset string) (search.Space, error) {
	s := ahscPreset(preset)
	switch {
	case dataset == "mnist":
		return ahscMNISTSpace(), nil
	case dataset == "svhn":
		return ahscSVHNSpace(), nil
	case contains(ahscBayesmarkSets, dataset):
		return ahscBayesmarkSpace(), nil
	case contains(ahscOpenMLSets, dataset):
		return ahscOpenMLSpace(s.maxLog2Width), nil
	}
	return nil, flagError("dataset", "%q: want one of %s", dataset, strings.Join(ahscAllSets(), ", "))
}

// ParseConfig reads a configuration of space from name → value text, refusing missing,
// unknown, malformed and out-of-range values.
func ParseConfig(space search.Space, values map[string]string) (search.Config, error) {
	cfg := search.Config{Space: space, Values: make([]float64, len(space))}
	for name := range values {
		if space.Index(name) < 0 {
			return cfg, flagError(name, "is not a parameter of this space (it has %s)", spaceNames(space))
		}
	}
	for i, p := range space {
		v, ok := values[p.Name]
		if !ok {
			return cfg, flagError(p.Name, "is missing (the space has %s)", spaceNames(space))
		}
		switch p.Kind {
		case search.Categorical:
			k := slices.Index(p.Choices, v)
			if k < 0 {
				return cfg, flagError(p.Name, "%q: want one of %s", v, strings.Join(p.Choices, ", "))
			}
			cfg.Values[i] = float64(k)
		case search.Int:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return cfg, flagError(p.Name, "%q: want an integer in [%g, %g]", v, p.Low, p.High)
			}
			if float64(n) < p.Low || float64(n) > p.High {
				return cfg, flagError(p.Name, "%d is out of range: want an integer in [%g, %g]", n, p.Low, p.High)
			}
			cfg.Values[i] = float64(n)
		default:
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(x) {
				return cfg, flagError(p.Name, "%q: want a number in [%g, %g]", v, p.Low, p.High)
			}
			if x < p.Low || x > p.High {
				return cfg, flagError(p.Name, "%g is out of range: want a number in [%g, %g]", x, p.Low, p.High)
			}
			cfg.Values[i] = x
		}
	}
	return cfg, nil
}

func spaceNames(space search.Space) string {
	var names []string
	for _, p := range space {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// Trial evaluates one configuration of the ahsc experiment's objective on a dataset, exactly
// as every search method's full-fidelity trial does (same split of the given repeat, same
// initial weights, same early stopping), and returns its metrics in a fixed order:
// objective (what the searches minimize), the validation metric and loss, the test metric
// (and accuracy, when the metric is another), the test log loss, the strong convexity μ after one epoch (AHSC's screening score) and
// seconds. It is the trial of a Katib experiment (`hyperflat trial`).
func Trial(ctx context.Context, opt Options, dataset string, cfg search.Config, repeat int) ([]Metric, error) {
	e := ahscExperiment()
	params := map[string]string{"dataset": dataset}
	for k, v := range opt.Params {
		if k != "dataset" {
			params[k] = v
		}
	}
	opt.Params = params
	opt, err := e.Resolve(opt)
	if err != nil {
		return nil, err
	}
	s, err := ahscSettingsFor(opt)
	if err != nil {
		return nil, err
	}
	if repeat < 0 {
		return nil, flagError("repeat", "%d: want 0 or more", repeat)
	}
	s.fixed = &cfg
	p, err := ahscLoadProblem(ctx, opt, s, dataset, "")
	if err != nil {
		return nil, err
	}
	sp, err := p.split(repeat)
	if err != nil {
		return nil, err
	}
	r, err := ahscRunOne(ctx, p, sp, s, "fixed", repeat, ahscSeed(opt.Seed, p.name, repeat), max(1, opt.Workers))
	if err != nil {
		return nil, err
	}
	if r.err != "" {
		return nil, fmt.Errorf("trial failed: %s", r.err)
	}
	if len(r.evals) == 0 || r.evals[0].failed {
		return nil, fmt.Errorf("trial failed")
	}
	ev := r.evals[0]
	metric := strings.ReplaceAll(string(p.metric), "-", "_") // roc-auc → roc_auc
	ms := []Metric{
		{"objective", r.objective},
		{"val_" + metric, ev.valMetric},
		{"val_loss", ev.valLoss},
		{"test_" + metric, ev.testMetric},
	}
	if p.metric != convexity.Accuracy {
		ms = append(ms, Metric{"test_accuracy", ev.testAcc})
	}
	return append(ms,
		Metric{"test_log_loss", ev.testNLL},
		Metric{"strong_convexity", r.mu},
		Metric{"seconds", r.seconds}), nil
}

// ahscFixed is the "method" of a single trial: it screens the configuration as AHSC would
// (μ after one epoch) and evaluates it once at full fidelity.
type ahscFixed struct {
	task *convexity.Task
	cfg  search.Config
	mu   float64
}

func (f *ahscFixed) Name() string { return "fixed" }

func (f *ahscFixed) Search(ctx context.Context, _ *rand.Rand, _ search.Space, obj search.Objective, _ int) ([]search.Trial, error) {
	f.mu = math.NaN()
	if c, _, err := f.task.Fit(ctx, f.cfg, 1, false); err == nil {
		if mu, err := convexity.StrongConvexity(ctx, c.Model, f.task.Train, convexity.MuOptions{BatchSize: c.BatchSize}); err == nil {
			f.mu = mu
		}
	}
	v, err := obj(ctx, f.cfg, 1)
	t := search.Trial{ID: 0, Config: f.cfg, Value: v, Fidelity: 1, State: search.Complete}
	if err != nil {
		t.State, t.Err = search.Failed, err.Error()
	}
	return []search.Trial{t}, nil
}
