package ahsc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
)

// Experiment is Table 1 and Figure 2 of the AHSC paper: AHSC against random search, TPE,
// BOHB, HEBO and TuRBO on the paper's 14 datasets or on a user's table.
func Experiment() experiments.Experiment {
	return experiments.Define[*Config]("ahsc", experiments.AHSC,
		"AHSC (strong-convexity-guided search) vs random, TPE, BOHB, HEBO and TuRBO on the paper's "+
			"14 datasets or a user's table (Table 1, Figure 2)",
		plan, plots)
}

// note is a dataset that could not run, and why.
type note struct{ dataset, note string }

// job is one cell: a method's search on one repeat of one dataset.
type job struct {
	problem, repeat int
	method          string
	hidden          bool // Bayesmark's random reference, run when random is not among the methods
}

func plan(ctx context.Context, opt experiments.Options, cfg *Config) (*experiments.Plan, error) {
	problems, notes, err := loadProblems(ctx, opt, cfg)
	if err != nil {
		return nil, err
	}
	// Every repeat's split is drawn up front, so that one the data cannot give fails the run
	// before any training, but not kept: a cell draws its own again (the draw depends on the
	// repeat only). Kept, the authors' OpenML folds of phoneme (every column one-hot, 11,178
	// wide) held 9 GB for 20 repeats.
	sizes := make([]splitSizes, len(problems))
	for i, p := range problems {
		for r := range cfg.Repeats {
			sp, err := p.split(r)
			if err != nil {
				return nil, err
			}
			if r == 0 {
				sizes[i] = sp.sizes()
			}
		}
	}
	jobs := planJobs(problems, cfg)
	lim := limits{maxMem: opt.MaxMem, timeout: opt.TrialTimeout}
	p := &experiments.Plan{Best: "value", Higher: true}
	for _, j := range jobs {
		pr := problems[j.problem]
		key := fmt.Sprintf("%s/r%d/%s", pr.name, j.repeat, j.method)
		if j.hidden {
			key += "(reference)"
		}
		cc := map[string]any{"dataset": pr.name, "repeat": j.repeat, "method": j.method, "hidden": j.hidden}
		if pr.sha256 != "" {
			cc["data"], cc["data_sha256"] = cfg.Data, pr.sha256 // see experiments.Cell
		}
		if cfg.userSpace != nil { // the parsed space's hash: its layout and comments play no part
			cc["space"], cc["space_sha256"] = cfg.Space, cfg.userSpace.Space.Hash()
		}
		p.Cells = append(p.Cells, experiments.Cell{Key: key, Seed: repeatSeed(opt.Seed, pr.name, j.repeat), Config: cc})
	}
	p.Run = func(ctx context.Context, i, inner int) (experiments.CellResult, error) {
		j := jobs[i]
		pr := problems[j.problem]
		sd := cellSeeds(p.Cells[i].Seed, j.method)
		sp, err := pr.split(j.repeat)
		if err != nil {
			return experiments.CellResult{}, fmt.Errorf("ahsc: %s repeat %d: %w", pr.name, j.repeat, err)
		}
		r, err := runOne(ctx, pr, sp, cfg, j.method, j.repeat, sd, lim, inner)
		if err != nil {
			return experiments.CellResult{}, fmt.Errorf("ahsc: %s repeat %d, %s: %w", pr.name, j.repeat, j.method, err)
		}
		r.hidden = j.hidden
		return cellResult(r, pr, cfg), nil
	}
	p.Assemble = func(outputs []json.RawMessage) (*experiments.Result, error) {
		runs := make([]run, len(outputs))
		for i, raw := range outputs {
			var j runJSON
			if err := json.Unmarshal(raw, &j); err != nil {
				return nil, fmt.Errorf("ahsc: cell %s: %w", p.Cells[i].Key, err)
			}
			// The plan, not the stored text, says which dataset a cell is: a stored name
			// may differ from the problem's (JSON replaces invalid UTF-8).
			runs[i] = j.run()
			runs[i].dataset, runs[i].group = problems[jobs[i].problem].name, problems[jobs[i].problem].group
		}
		refs := bayesmarkScores(runs)
		return result(opt, cfg, problems, sizes, runs, refs, notes), nil
	}
	return p, nil
}

// loadProblems loads every dataset of the run. One that cannot be loaded fails the run, with
// the others that cannot, unless cfg.SkipMissing skips it with a note (and none can be).
func loadProblems(ctx context.Context, opt experiments.Options, cfg *Config) ([]*problem, []note, error) {
	var problems []*problem
	var notes []note
	var firstErr error
	for _, name := range cfg.datasets() {
		p, err := loadProblem(ctx, opt, cfg, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if cfg.SkipMissing {
				opt.Progressf("ahsc: %s skipped: %v", name, err)
			}
			notes = append(notes, note{name, "skipped: " + err.Error()})
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		problems = append(problems, p)
	}
	if len(problems) == 0 {
		return nil, nil, fetchHint(firstErr)
	}
	if len(notes) > 0 && !cfg.SkipMissing {
		return nil, nil, missingError(notes)
	}
	return problems, notes, nil
}

// fetchHint adds to a missing-file error the command that downloads the dataset (the
// several-dataset message, missingError, says it once for all).
func fetchHint(err error) error {
	var me *datasets.MissingError
	if errors.As(err, &me) {
		return fmt.Errorf("%w (hyperflat data fetch %s downloads them into the data directory)", err, me.Dataset)
	}
	return err
}

// missingError names every dataset a run could not load, with the reasons, and how to go on.
func missingError(notes []note) error {
	names := make([]string, len(notes))
	reasons := make([]string, len(notes))
	for i, n := range notes {
		names[i] = n.dataset
		reasons[i] = strings.TrimPrefix(n.note, "skipped: ")
	}
	return fmt.Errorf("ahsc: %d datasets cannot be loaded: %s (hyperflat data fetch NAME downloads one; "+
		"--skip-missing runs the others):\n  %s", len(notes), strings.Join(names, ", "), strings.Join(reasons, "\n  "))
}

// planJobs lists the cells: every method on every repeat of every dataset, plus Bayesmark's
// random reference where random search is not among the methods.
func planJobs(problems []*problem, cfg *Config) []job {
	var jobs []job
	for pi, p := range problems {
		hiddenRandom := p.group == bayesmark && !slices.Contains(cfg.Methods, "random")
		for r := range cfg.Repeats {
			for _, m := range cfg.Methods {
				jobs = append(jobs, job{pi, r, m, false})
			}
			if hiddenRandom {
				jobs = append(jobs, job{pi, r, "random", true})
			}
		}
	}
	return jobs
}

// cellResult is a finished cell's stored output, headline metrics and progress line.
func cellResult(r run, p *problem, cfg *Config) experiments.CellResult {
	status := fmt.Sprintf("test %s %.4g", p.metric, r.testMetric)
	if r.err != "" {
		status = "no result: " + r.err
	}
	return experiments.CellResult{Output: r.toJSON(),
		Metrics: map[string]float64{"value": r.value, "test_metric": r.testMetric, "val_objective": r.objective,
			"evaluations": float64(r.calls), "failed": float64(r.failed)},
		Summary: fmt.Sprintf("ahsc: %s repeat %d/%d %-12s %s (%d evaluations, %.1fs)", p.name, r.repeat+1, cfg.Repeats, r.method, status, r.calls, r.seconds)}
}
