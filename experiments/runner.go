package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// Runner runs experiments through a results store: cells are claimed, computed and committed
// one by one, so that a run can be stopped and resumed, split into static shards, or served
// by workers on many machines, and always assembles to the same result.
type Runner struct {
	Store *store.Store
	// Experiments are the experiments whose stored runs this runner can rebuild.
	Experiments Registry
	// Workers is how many cells this process computes at once (default 1).
	Workers int
	// Lease is how long a claimed cell stays reserved without a heartbeat (default 60 s);
	// heartbeats renew it every third of that.
	Lease time.Duration
	// Name identifies this process in the store (default host:pid).
	Name string
	// DataDir is where a worker finds datasets when it rebuilds a stored run's plan.
	DataDir string
	// Monitor observes cells; Progress receives the experiments' own progress lines.
	Monitor  Monitor
	Progress io.Writer
	// Poll is how often a process whose share is claimed by others checks for cells
	// to take over or for the run to finish (default 1 s).
	Poll time.Duration
	// Wait keeps a worker polling for new runs instead of exiting when none has work.
	Wait bool
	// Outage is how long the store may stay unreachable (a database restarting: see
	// store.IsUnavailable) before the runner gives up: meanwhile it retries with backoff, and
	// keeps a finished cell's result to commit once the store is back. 0 is DefaultOutage.
	Outage time.Duration
	// AnyBuild lets this runner compute cells of runs begun by another build (CodeVersion);
	// otherwise those runs are refused (Start, Work with runs named) or passed by (Work).
	AnyBuild bool
	// Log, if set, receives notes on the store's availability (an outage and its end).
	Log io.Writer
}

// Mode says how Runner.Start treats a run already in the store.
type Mode struct {
	// Resume continues the latest run with the same identity (retrying its failed cells, and
	// reopening it if it was retired: store.Store.Retire) instead of starting a new one;
	// without a matching run it starts one.
	Resume bool
	// Shard and Shards restrict this process to the cells whose index is Shard mod Shards
	// (a Kubernetes Indexed Job or a Slurm array); sharded processes always resume, except a
	// retired run, which is an error unless Resume is set too.
	Shard, Shards int
	// Submit only records the run and its cells, for workers to compute.
	Submit bool
}

// Status is where a run stands after Runner.Start.
type Status struct {
	Run store.Run
	// Result is the assembled result once every cell is done (nil before).
	Result *Result
	// Computed is how many cells this process computed.
	Computed int
}

// storedOptions are the options that determine a run's results; DataDir, Out and Workers
// do not, and are not stored. Config is the experiment's resolved typed configuration.
type storedOptions struct {
	Preset       string          `json:"preset"`
	Seed         uint64          `json:"seed"`
	Config       json.RawMessage `json:"config"`
	MaxMem       int64           `json:"max_mem,omitempty"`
	TrialTimeout time.Duration   `json:"trial_timeout,omitempty"`
}

func storedOf(opt Options) (storedOptions, error) {
	cfg, err := json.Marshal(opt.Config)
	if err != nil {
		return storedOptions{}, fmt.Errorf("config: %w", err)
	}
	return storedOptions{opt.Preset, opt.Seed, cfg, opt.MaxMem, opt.TrialTimeout}, nil
}

// Identity is the stable name of what an experiment run with these resolved options (see
// Experiment.Resolve) computes: two runs with the same identity have the same cells and
// results, and runs that differ in any config field have different identities.
func Identity(experiment string, opt Options) (string, error) {
	so, err := storedOf(opt)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(struct {
		Experiment string `json:"experiment"`
		storedOptions
	}{experiment, so})
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return experiment + "-" + hex.EncodeToString(h[:8]), nil
}

func (r *Runner) defaults() {
	if r.Workers <= 0 {
		r.Workers = 1
	}
	if r.Lease <= 0 {
		r.Lease = time.Minute
	}
	if r.Poll <= 0 {
		r.Poll = time.Second
	}
	if r.Name == "" {
		host, _ := os.Hostname()
		r.Name = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
}

// Start runs (or resumes, or submits) the experiment in the store and computes this
// process's share of its cells. When every cell of the run is done it assembles, stores and
// returns the result; a shard that finishes before the others returns without one.
func (r *Runner) Start(ctx context.Context, e Experiment, opt Options, mode Mode) (*Status, error) {
	r.defaults()
	if mode.Shards < 0 || (mode.Shards > 0 && (mode.Shard < 0 || mode.Shard >= mode.Shards)) {
		return nil, fmt.Errorf("shard %d/%d: want 0 ≤ i < n", mode.Shard, mode.Shards)
	}
	opt.Progress = r.Progress
	opt, p, err := e.plan(ctx, opt)
	if err != nil {
		return nil, err
	}
	run, err := r.openRun(ctx, e, opt, p, mode)
	if err != nil {
		return nil, err
	}
	st := &Status{Run: run}
	if mode.Submit {
		return st, nil
	}
	pc := &planCache{plans: map[int64]*planned{run.ID: {e: e, opt: opt, plan: p}}}
	claim := store.ClaimOptions{Runs: []int64{run.ID}, Shard: mode.Shard, Shards: mode.Shards, Worker: r.Name, Lease: r.Lease}
	inScope := func(c store.Cell) bool { return mode.Shards == 0 || c.Index%mode.Shards == mode.Shard }
	if r.Monitor != nil {
		cells, err := r.Store.Cells(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		total, done := 0, 0
		for _, c := range cells {
			if inScope(c) {
				total++
				if c.Status == store.Done {
					done++
				}
			}
		}
		r.Monitor.Begin(total, done, p.Best, p.Higher)
	}
	inner := innerWorkers(r.Workers, len(p.Cells))
	computed, err := r.serve(ctx, pc, claim, inner, false, func(ctx context.Context) (bool, error) {
		if mode.Shards == 0 { // counts suffice; Cells would read every output
			rr, err := r.Store.GetRun(ctx, run.ID)
			return rr.Left() > 0, err
		}
		cells, err := r.Store.Cells(ctx, run.ID)
		if err != nil {
			return false, err
		}
		for _, c := range cells {
			if inScope(c) && (c.Status == store.Pending || c.Status == store.Running) {
				return true, nil
			}
		}
		return false, nil
	})
	st.Computed = computed
	if err != nil {
		return st, err
	}
	if st.Run, err = r.Store.GetRun(ctx, run.ID); err != nil {
		return st, err
	}
	if err := failedCells(ctx, r.Store, st.Run); err != nil {
		return st, err
	}
	if st.Run.Retired > 0 {
		return st, fmt.Errorf("run %d was retired while this process served it: %d of its %d cells done", run.ID, st.Run.Done, st.Run.Cells)
	}
	if st.Run.Done < st.Run.Cells {
		return st, nil // other shards are still at work
	}
	res, err := r.finish(ctx, pc.plans[run.ID], st.Run)
	if err != nil {
		return st, err
	}
	st.Result = res
	st.Run.HasResult = true
	return st, nil
}

// openRun records a new run of the plan in the store or, to resume or shard, finds the
// stored run with the same identity (its cells must be the plan's).
func (r *Runner) openRun(ctx context.Context, e Experiment, opt Options, p *Plan, mode Mode) (store.Run, error) {
	identity, err := Identity(e.Name, opt)
	if err != nil {
		return store.Run{}, err
	}
	so, err := storedOf(opt)
	if err != nil {
		return store.Run{}, err
	}
	spec := store.RunSpec{Identity: identity, Experiment: e.Name, Build: CodeVersion()}
	if spec.Options, err = json.Marshal(so); err != nil {
		return store.Run{}, err
	}
	for i, c := range p.Cells {
		cfg, err := json.Marshal(c.Config)
		if err != nil {
			return store.Run{}, fmt.Errorf("cell %s: config: %w", c.Key, err)
		}
		spec.Cells = append(spec.Cells, store.CellSpec{Index: i, Key: c.Key, Seed: c.Seed, Config: cfg})
	}
	if !mode.Resume && mode.Shards == 0 {
		return r.Store.CreateRun(ctx, spec)
	}
	run, err := r.Store.FindOrCreateRun(ctx, spec)
	if err != nil {
		return run, err
	}
	if err := r.checkBuild(run); err != nil {
		return run, err
	}
	if err := r.checkCells(ctx, run.ID, p); err != nil {
		return run, err
	}
	if run.Retired > 0 && !mode.Resume {
		return run, fmt.Errorf("run %d is retired (%d of its cells were taken out of the work): --resume reopens it", run.ID, run.Retired)
	}
	if mode.Resume {
		if _, err := r.Store.Retry(ctx, run.ID); err != nil {
			return run, err
		}
		if _, err := r.Store.Reopen(ctx, run.ID); err != nil { // resuming a run asks for its cells
			return run, err
		}
		if err := r.releaseOrphans(ctx, run.ID); err != nil {
			return run, err
		}
	}
	return run, nil
}

// releaseOrphans hands back the cells held by processes of this host that no longer exist (a
// killed run being resumed), so that they are redone at once instead of after their lease.
func (r *Runner) releaseOrphans(ctx context.Context, run int64) error {
	host, err := os.Hostname()
	if err != nil {
		return nil
	}
	cells, err := r.Store.Cells(ctx, run)
	if err != nil {
		return err
	}
	for _, c := range cells {
		if c.Status != store.Running {
			continue
		}
		rest, ok := strings.CutPrefix(c.Worker, host+":")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "/", 2)[0])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		l := &store.Lease{Run: run, Index: c.Index, Key: c.Key, Seed: c.Seed, Worker: c.Worker, Attempt: c.Attempts}
		if err := r.Store.Release(ctx, l); err != nil && !errors.Is(err, store.ErrLeaseLost) {
			return err
		}
	}
	return nil
}

// failedCells reports the run's failed cells as an error.
func failedCells(ctx context.Context, s *store.Store, run store.Run) error {
	if run.Failed == 0 {
		return nil
	}
	cells, err := s.Cells(ctx, run.ID)
	if err != nil {
		return err
	}
	var msgs []string
	for _, c := range cells {
		if c.Status == store.Failed {
			msgs = append(msgs, fmt.Sprintf("%s: %s", c.Key, c.Error))
		}
	}
	if len(msgs) > 3 {
		msgs = append(msgs[:3], fmt.Sprintf("and %d more", len(msgs)-3))
	}
	return fmt.Errorf("run %d: %d of %d cells failed (--resume retries them): %s", run.ID, run.Failed, run.Cells, strings.Join(msgs, "; "))
}

// checkCells refuses to resume a stored run whose cells differ from the plan's, keys, seeds
// or configurations (the code or the data changed the plan since the run began): the
// cells it would add could not be assembled with the stored ones into one result.
func (r *Runner) checkCells(ctx context.Context, run int64, p *Plan) error {
	cells, err := r.Store.Cells(ctx, run)
	if err != nil {
		return err
	}
	if len(cells) != len(p.Cells) {
		return fmt.Errorf("stored run %d has %d cells, this plan %d: the plan changed since the run began; start a new run without --resume", run, len(cells), len(p.Cells))
	}
	for i, c := range cells {
		if c.Key != p.Cells[i].Key || c.Seed != p.Cells[i].Seed {
			return fmt.Errorf("stored run %d: cell %d is %s (seed %d), the plan's is %s (seed %d): start a new run without --resume", run, i, c.Key, c.Seed, p.Cells[i].Key, p.Cells[i].Seed)
		}
		change, err := configChange(c.Key, c.Config, p.Cells[i].Config)
		if err != nil {
			return fmt.Errorf("stored run %d, cell %s: %w", run, c.Key, err)
		}
		if change != "" {
			return fmt.Errorf("stored run %d: %s; start a new run without --resume", run, change)
		}
	}
	return nil
}

// configChange says how a stored cell's configuration differs from the plan's ("" when it
// does not), comparing their JSON forms, as the store holds them. A key NAME_sha256 is the
// hash of the file at the path under the key NAME (see Cell), reported as a changed file.
func configChange(key string, stored json.RawMessage, planned map[string]any) (string, error) {
	b, err := json.Marshal(planned)
	if err != nil {
		return "", err
	}
	var was, now map[string]any
	if len(stored) > 0 {
		if err := json.Unmarshal(stored, &was); err != nil {
			return "", fmt.Errorf("stored config: %w", err)
		}
	}
	if err := json.Unmarshal(b, &now); err != nil {
		return "", err
	}
	keys := make([]string, 0, len(was)+len(now))
	for k := range was {
		keys = append(keys, k)
	}
	for k := range now {
		if _, ok := was[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if file, ok := strings.CutSuffix(k, "_sha256"); ok && !reflect.DeepEqual(was[k], now[k]) {
			return fmt.Sprintf("the %s file %v changed since the run began: sha256 %s → %s", file, now[file], shortHash(was[k]), shortHash(now[k])), nil
		}
	}
	for _, k := range keys {
		if !reflect.DeepEqual(was[k], now[k]) {
			return fmt.Sprintf("cell %s's %s was %s, the plan's is %s (the code or the data changed since the run began)", key, k, showJSON(was[k]), showJSON(now[k])), nil
		}
	}
	return "", nil
}

// shortHash abbreviates a hex hash for messages, as git does.
func shortHash(v any) string {
	s, ok := v.(string)
	if !ok {
		return "(none)"
	}
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

func showJSON(v any) string {
	if v == nil {
		return "(none)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// finish assembles a run whose cells are all done, stores the result and writes its files.
func (r *Runner) finish(ctx context.Context, pl *planned, run store.Run) (*Result, error) {
	res, err := assembleStored(ctx, r.Store, pl, run)
	if err != nil {
		return nil, err
	}
	b, err := res.MarshalStored()
	if err != nil {
		return nil, err
	}
	if err := r.Store.SaveResult(ctx, run.ID, b); err != nil {
		return nil, err
	}
	if err := pl.e.Save(res, pl.opt.Out); err != nil {
		return nil, err
	}
	return res, nil
}

func assembleStored(ctx context.Context, s *store.Store, pl *planned, run store.Run) (*Result, error) {
	cells, err := s.Cells(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	outputs := make([]json.RawMessage, len(cells))
	for i, c := range cells {
		if c.Status != store.Done {
			return nil, fmt.Errorf("run %d: cell %s is %s", run.ID, c.Key, c.Status)
		}
		outputs[i] = c.Outcome.Output
	}
	res, err := pl.plan.Assemble(outputs)
	if err != nil {
		return nil, err
	}
	res.Params = FlagValues(pl.opt.Config)
	return res, nil
}

// planned is a run's experiment, options and plan, as a worker rebuilt them.
type planned struct {
	e    Experiment
	opt  Options
	plan *Plan
}

type planCache struct {
	mu    sync.Mutex
	plans map[int64]*planned
}

// get returns the plan of a stored run, building it from the stored options the first time.
func (pc *planCache) get(ctx context.Context, r *Runner, runID int64) (*planned, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pl, ok := pc.plans[runID]; ok {
		return pl, nil
	}
	run, err := r.Store.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	pl, err := r.rebuild(ctx, run)
	if err != nil {
		return nil, err
	}
	if err := r.checkCells(ctx, runID, pl.plan); err != nil {
		return nil, err
	}
	pc.plans[runID] = pl
	return pl, nil
}

// rebuild makes a stored run's plan from its stored options.
func (r *Runner) rebuild(ctx context.Context, run store.Run) (*planned, error) {
	e, err := r.Experiments.Lookup(run.Experiment)
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", run.ID, err)
	}
	opt, err := DecodeOptions(e, run.Options)
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", run.ID, err)
	}
	opt.DataDir, opt.Workers, opt.Progress = r.DataDir, r.Workers, r.Progress
	opt, p, err := e.plan(ctx, opt)
	if err != nil {
		return nil, fmt.Errorf("run %d (%s): %w", run.ID, run.Experiment, err)
	}
	return &planned{e: e, opt: opt, plan: p}, nil
}

// DecodeOptions decodes a stored run's options (Runner stores them) into Options with the
// experiment's typed configuration. A stored configuration with a field the config type does
// not have is an error: the code changed since the run was stored.
func DecodeOptions(e Experiment, stored []byte) (Options, error) {
	var so storedOptions
	if err := json.Unmarshal(stored, &so); err != nil {
		return Options{}, fmt.Errorf("stored options: %w", err)
	}
	cfg, err := e.decodeConfig(so.Config)
	if err != nil {
		return Options{}, err
	}
	return Options{Preset: so.Preset, Seed: so.Seed, Config: cfg, MaxMem: so.MaxMem, TrialTimeout: so.TrialTimeout}, nil
}

// Report returns a stored run's result without recomputing anything: the stored result, or,
// for a run whose cells are all done but which was never assembled, the assembly of its
// stored cells (which rebuilds the plan, so may read datasets from dataDir), which it stores
// unless s is read-only. run 0 is the latest run.
func Report(ctx context.Context, s *store.Store, reg Registry, run int64, dataDir string) (*Result, store.Run, error) {
	var info store.Run
	if run == 0 {
		runs, err := s.Runs(ctx)
		if err != nil {
			return nil, info, err
		}
		if len(runs) == 0 {
			return nil, info, fmt.Errorf("store %s holds no runs", s.DSN())
		}
		info = runs[len(runs)-1]
	} else {
		var err error
		if info, err = s.GetRun(ctx, run); err != nil {
			return nil, info, err
		}
	}
	b, ok, err := s.Result(ctx, info.ID)
	if err != nil {
		return nil, info, err
	}
	if ok {
		res, err := UnmarshalStoredResult(b)
		return res, info, err
	}
	if info.Retired > 0 {
		return nil, info, fmt.Errorf("run %d (%s) is retired: %d of %d cells done, %d failed, %d retired (hyperflat retire --undo or run … --resume reopens it)",
			info.ID, info.Experiment, info.Done, info.Cells, info.Failed, info.Retired)
	}
	if info.Done < info.Cells {
		return nil, info, fmt.Errorf("run %d (%s) is not finished: %d of %d cells done, %d failed, %d running",
			info.ID, info.Experiment, info.Done, info.Cells, info.Failed, info.Running)
	}
	r := &Runner{Store: s, Experiments: reg, DataDir: dataDir}
	r.defaults()
	pl, err := r.rebuild(ctx, info)
	if err != nil {
		return nil, info, err
	}
	res, err := assembleStored(ctx, s, pl, info)
	if err != nil {
		return nil, info, err
	}
	if s.ReadOnly() {
		return res, info, nil // a reading command never writes; the next writer stores it
	}
	if b, err = res.MarshalStored(); err == nil {
		err = s.SaveResult(ctx, info.ID, b)
	}
	return res, info, err
}
