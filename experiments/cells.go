package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hyperflat/hyperflat/internal/nanjson"
)

// Cell is one deterministic unit of a run (a dataset × method × repeat, a replicate × ζ, …).
// Its result depends only on the run's options and on the cell itself, never on which worker
// computes it, in which process, or in what order: Seed is the seed the cell draws from.
// Config is what else the cell depends on; a resume or a worker whose plan's Config differs
// from the stored one is refused. A file the cell reads belongs in it as a pair of keys,
// NAME (its path) and NAME_sha256 (its content's hash), so that a changed file is refused
// with a message naming it.
type Cell struct {
	Key    string         `json:"key"`
	Seed   uint64         `json:"seed"`
	Config map[string]any `json:"config,omitempty"`
}

// CellResult is what computing a cell produced.
type CellResult struct {
	// Output is everything Assemble needs from the cell; it is stored as JSON (use the float
	// type F64 for values that may be NaN or infinite).
	Output any
	// Metrics are the cell's headline numbers, stored beside the output and shown in progress.
	Metrics map[string]float64
	// History is an optional per-step record, stored for later analysis.
	History any
	// Summary is one line for progress output.
	Summary string
}

// Plan is a run split into cells. An experiment's Plan function builds it from resolved
// options; building it may load data, but must not compute any cell.
type Plan struct {
	Cells []Cell
	// Run computes cell i. workers is how many goroutines the cell may use itself (results
	// must not depend on it).
	Run func(ctx context.Context, i, workers int) (CellResult, error)
	// Assemble builds the result from every cell's JSON output, in plan order.
	Assemble func(outputs []json.RawMessage) (*Result, error)
	// Best names the metric progress reports as the best so far; Higher says which way.
	Best   string
	Higher bool
}

// Monitor observes a run's cells; the CLI draws it as progress bars. Methods may be called
// from several goroutines at once.
type Monitor interface {
	// Begin is called once, with the number of cells of this process's share, how many of
	// them were already finished (a resumed run), and the metric that ranks cells (best;
	// "" for none) and which way (higher).
	Begin(total, done int, best string, higher bool)
	// Started reports that worker slot began computing the cell.
	Started(slot int, key string)
	// Finished reports a finished (err == nil) or failed cell.
	Finished(slot int, key string, r CellResult, seconds float64, err error)
}

// F64 is a float64 that survives JSON: NaN and infinities are written as the strings "NaN",
// "+Inf" and "-Inf" (encoding/json refuses them as numbers).
type F64 = nanjson.Float

// plan resolves the options and builds the experiment's plan.
func (e Experiment) plan(ctx context.Context, opt Options) (Options, *Plan, error) {
	opt, err := e.Resolve(opt)
	if err != nil {
		return opt, nil, err
	}
	if e.Plan == nil {
		return opt, nil, fmt.Errorf("%s has no plan", e.Name)
	}
	p, err := e.Plan(ctx, opt)
	if err != nil {
		return opt, nil, err
	}
	seen := make(map[string]bool, len(p.Cells))
	for _, c := range p.Cells {
		if seen[c.Key] {
			return opt, nil, fmt.Errorf("%s: two cells share the key %q", e.Name, c.Key)
		}
		seen[c.Key] = true
	}
	return opt, p, nil
}

// innerWorkers shares workers among cells: a run of fewer cells than workers lets each
// cell use the spare ones itself.
func innerWorkers(workers, cells int) int {
	if cells > 0 && cells < workers {
		return max(1, workers/cells)
	}
	return 1
}

// Run runs the experiment in this process, without a store: every cell on opt.Workers
// goroutines, then the tables (and, with opt.Out, CSV, JSON and PNG files). The result is
// the same for any number of workers, and the same as a stored, resumed or sharded run.
func (e Experiment) Run(ctx context.Context, opt Options) (*Result, error) {
	opt, p, err := e.plan(ctx, opt)
	if err != nil {
		return nil, err
	}
	outputs := make([]json.RawMessage, len(p.Cells))
	inner := innerWorkers(opt.Workers, len(p.Cells))
	if opt.Monitor != nil {
		opt.Monitor.Begin(len(p.Cells), 0, p.Best, p.Higher)
	}
	slots := make(chan int, opt.Workers)
	for i := range opt.Workers {
		slots <- i
	}
	err = Parallel(ctx, opt.Workers, len(p.Cells), func(i int) error {
		slot := <-slots
		defer func() { slots <- slot }()
		key := p.Cells[i].Key
		if opt.Monitor != nil {
			opt.Monitor.Started(slot, key)
		}
		start := time.Now()
		r, err := p.Run(ctx, i, inner)
		if err == nil {
			var b []byte
			if b, err = json.Marshal(r.Output); err == nil {
				outputs[i] = b // each cell writes only its own slot
			}
		}
		if opt.Monitor != nil {
			opt.Monitor.Finished(slot, key, r, time.Since(start).Seconds(), err)
		}
		if err != nil {
			return fmt.Errorf("%s: cell %s: %w", e.Name, key, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res, err := p.Assemble(outputs)
	if err != nil {
		return nil, err
	}
	res.Params = FlagValues(opt.Config)
	if err := e.Save(res, opt.Out); err != nil {
		return nil, err
	}
	return res, nil
}

// Save writes the result's tables (CSV and result.json) and its figures (PNG) under dir,
// recording them as artifacts; "" writes nothing.
func (e Experiment) Save(res *Result, dir string) error {
	if dir == "" {
		return nil
	}
	if e.Plots != nil {
		paths, err := e.Plots(res, dir)
		if err != nil {
			return err
		}
		res.Artifacts = append(res.Artifacts, paths...)
	}
	return res.SaveTables(dir)
}

// F64s converts floats to their JSON-safe form.
func F64s(xs []float64) []F64 {
	out := make([]F64, len(xs))
	for i, x := range xs {
		out[i] = F64(x)
	}
	return out
}

// Floats converts JSON-safe floats back.
func Floats(xs []F64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
