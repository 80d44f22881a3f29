package ahsc

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
)

// Metric is one named number of a trial.
type Metric struct {
	Name  string
	Value float64
}

// TrialSpace is the search space of cfg.Dataset in the ahsc experiment (Table 2), or the
// user's (cfg.Space): the dimensions a trial's configuration sets.
func TrialSpace(cfg *Config) (search.Space, error) {
	if cfg.userSpace != nil {
		return cfg.userSpace.Space, nil
	}
	switch g := groupOf(cfg.Dataset); {
	case cfg.Dataset == "mnist":
		return MNISTSpace(), nil
	case cfg.Dataset == "svhn":
		return SVHNSpace(), nil
	case g == bayesmark && cfg.Protocol == protocolAuthors:
		return AuthorsBayesmarkSpace(), nil
	case g == bayesmark:
		return BayesmarkSpace(), nil
	case g == openML:
		return OpenMLSpace(cfg.MaxLog2Width), nil
	}
	return nil, experiments.FlagErrorf("dataset", "%q: want one of %s", cfg.Dataset, strings.Join(allSets(), ", "))
}

// ParseConfig reads a configuration of space from name → value text, refusing missing,
// unknown, malformed and out-of-range values.
func ParseConfig(space search.Space, values map[string]string) (search.Config, error) {
	cfg := search.Config{Space: space, Values: make([]float64, len(space))}
	for name := range values {
		if space.Index(name) < 0 {
			return cfg, experiments.FlagErrorf(name, "is not a parameter of this space (it has %s)", spaceNames(space))
		}
	}
	for i, p := range space {
		v, ok := values[p.Name]
		if !ok {
			return cfg, experiments.FlagErrorf(p.Name, "is missing (the space has %s)", spaceNames(space))
		}
		switch p.Kind {
		case search.Categorical:
			k := slices.Index(p.Choices, v)
			if k < 0 {
				return cfg, experiments.FlagErrorf(p.Name, "%q: want one of %s", v, strings.Join(p.Choices, ", "))
			}
			cfg.Values[i] = float64(k)
		case search.Int:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return cfg, experiments.FlagErrorf(p.Name, "%q: want an integer in [%g, %g]", v, p.Low, p.High)
			}
			if float64(n) < p.Low || float64(n) > p.High {
				return cfg, experiments.FlagErrorf(p.Name, "%d is out of range: want an integer in [%g, %g]", n, p.Low, p.High)
			}
			cfg.Values[i] = float64(n)
		default:
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(x) {
				return cfg, experiments.FlagErrorf(p.Name, "%q: want a number in [%g, %g]", v, p.Low, p.High)
			}
			if x < p.Low || x > p.High {
				return cfg, experiments.FlagErrorf(p.Name, "%g is out of range: want a number in [%g, %g]", x, p.Low, p.High)
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

// Trial evaluates one configuration hp of the ahsc experiment's objective on the dataset of
// opt.Config (a *Config; nil: the preset's defaults), exactly as every search method's
// full-fidelity trial does (the same split of the given repeat, the same initial weights, the
// same early stopping), and returns its metrics in a fixed order: objective (what the searches
// minimize), the validation metric and loss, the test metric (and accuracy, when the metric is
// another), the test log loss, the strong convexity μ after one epoch (AHSC's screening score)
// and seconds; with cfg.Whitebox, then the white-box record (whitebox_mu, …, as the
// evaluations table's columns). It is the trial of a Katib experiment (`hyperflat trial`).
func Trial(ctx context.Context, opt experiments.Options, hp search.Config, repeat int) ([]Metric, error) {
	task, err := TrialTask(ctx, opt, repeat)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// μ as AHSC's screening measures it, then the full training every method's trial does.
	mu := (&convexity.AHSC{Task: task}).Screen(ctx, hp, nil).Score
	e := task.Evaluate(ctx, hp, 1)
	seconds := time.Since(start).Seconds()
	if e.Err != nil {
		return nil, fmt.Errorf("trial failed: %w", e.Err)
	}
	metric := strings.ReplaceAll(string(task.Metric), "-", "_") // roc-auc → roc_auc
	ms := []Metric{
		{"objective", e.Value},
		{"val_" + metric, e.ValMetric},
		{"val_loss", e.ValLoss},
		{"test_" + metric, e.TestMetric},
	}
	if task.Metric != convexity.Accuracy {
		ms = append(ms, Metric{"test_accuracy", e.TestAccuracy})
	}
	ms = append(ms,
		Metric{"test_log_loss", e.TestLoss},
		Metric{"strong_convexity", mu},
		Metric{"seconds", seconds})
	if e.Whitebox != nil { // --whitebox: the record's columns, named as the evaluations table's
		for i, v := range whiteboxValues(e.Whitebox) {
			var x float64
			switch v := v.(type) {
			case float64:
				x = v
			case int:
				x = float64(v)
			default: // the eigenvalue's method, a name: the record's own is Lanczos
				continue
			}
			ms = append(ms, Metric{whiteboxColumns[i], x})
		}
	}
	return ms, nil
}

// TrialTask is the objective Trial evaluates through: the given repeat of the dataset of
// opt.Config (a *Config; nil: the preset's defaults) — that repeat's split, initial weights,
// early stopping and protocol — as every method of the experiment trains. The premise
// experiment (experiments/premise) looks inside its trainings.
func TrialTask(ctx context.Context, opt experiments.Options, repeat int) (*convexity.Task, error) {
	opt, err := Experiment().Resolve(opt)
	if err != nil {
		return nil, err
	}
	cfg := opt.Config.(*Config)
	if repeat < 0 {
		return nil, experiments.FlagErrorf("repeat", "%d: want 0 or more", repeat)
	}
	if cfg.Data != "" || groupOf(cfg.Dataset) == user {
		return nil, experiments.FlagErrorf("dataset", "%q: want one of %s", cfg.Dataset, strings.Join(allSets(), ", "))
	}
	p, err := loadProblem(ctx, opt, cfg, cfg.Dataset)
	if err != nil {
		return nil, err
	}
	sp, err := p.split(repeat)
	if err != nil {
		return nil, err
	}
	weights := cellSeeds(repeatSeed(opt.Seed, p.name, repeat), "fixed").weights
	task := newTask(p, sp, cfg, weights, limits{maxMem: opt.MaxMem, timeout: opt.TrialTimeout})
	if cfg.Protocol == protocolAuthors {
		authorsTask(task, p, "trial", weights)
	}
	return task, nil
}
