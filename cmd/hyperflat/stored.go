package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/store"
	"github.com/spf13/pflag"
)

// EnvStore names the environment variable that supplies a default --store.
const EnvStore = "HYPERFLAT_STORE"

type storeFlags struct {
	store *string
	lease *time.Duration // nil for a command that only reads the store
}

// addStoreFlags adds --store and, for a command that computes cells (claims leases), --lease:
// a reading command shows only the flags it uses.
func addStoreFlags(fs *pflag.FlagSet, computes bool) storeFlags {
	f := storeFlags{store: fs.String("store", "", "results store: postgres://… for PostgreSQL, or a SQLite file path (default $"+EnvStore+", then OUT/hyperflat.db with --out)")}
	if computes {
		f.lease = fs.Duration("lease", time.Minute, "how long a claimed cell stays reserved without a heartbeat (a dead worker's cell is taken over after it; an ahsc cell goes on from the evaluations it recorded)")
	}
	return f
}

// dsn is the store to use: --store, then $HYPERFLAT_STORE, then OUT/hyperflat.db.
func (f storeFlags) dsn(out string) string {
	if *f.store != "" {
		return *f.store
	}
	if env := os.Getenv(EnvStore); env != "" {
		return env
	}
	if out != "" {
		// A "?" in OUT would otherwise start the SQLite driver's parameters.
		return store.SQLiteDSN(filepath.Join(out, "hyperflat.db"))
	}
	return ""
}

func (f storeFlags) check() error {
	if f.lease != nil && *f.lease < time.Second {
		return fmt.Errorf("--lease %v; want at least 1s", *f.lease)
	}
	return nil
}

// runIDs adds --run as a list of run IDs ("--run 3,4" or "--run 3 --run 4"), shown in the
// help without pflag's empty default.
func runIDs(fs *pflag.FlagSet, usage string) *[]int64 {
	ids := fs.Int64Slice("run", nil, usage)
	fs.Lookup("run").DefValue = ""
	return ids
}

func openStore(ctx context.Context, dsn string) (*store.Store, error) {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	return st, nil
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("worker")
	sf := addStoreFlags(fs, true)
	runs := runIDs(fs, "serve only these runs, in the order given (`IDs` as 3,4 or the flag repeated): a run's cells before the next run's; default: every run with cells left, lowest first")
	workers := fs.Int("workers", 1, "cells computed at once by this process")
	dataDir := fs.String("data-dir", "", "dataset directory (default $"+datasets.EnvDataDir+", then the project's data folder)")
	name := fs.String("name", "", "this worker's name in the store (default host:pid)")
	wait := &waitValue{}
	fs.Var(wait, "wait", "keep polling for new runs instead of exiting when no run has cells left, and ride out a store that is unreachable (a database restarting) for up to `D` (--wait alone: for as long as it takes; without --wait: 1m), keeping a finished cell's result until it is stored")
	fs.Lookup("wait").NoOptDefVal = "forever"
	anyBuild := fs.Bool("any-build", false, "also compute cells of runs begun by another build of hyperflat (hyperflat version names this one), which would mix two builds' arithmetic in one run")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	synopsis := "worker --store DSN [--run ID,...] [--workers N] [--lease D] [--data-dir DIR] [--name NAME] [--wait[=D]] [--any-build] [--quiet]"
	if code, ok := parse(fs, synopsis, args, stdout, stderr); !ok {
		return code
	}
	dsn := sf.dsn("")
	if dsn == "" {
		fmt.Fprintf(stderr, "hyperflat worker: --store is required (or $%s)\n", EnvStore)
		return exitUsage
	}
	if err := sf.check(); err != nil {
		fmt.Fprintf(stderr, "hyperflat worker: %v\n", err)
		return exitUsage
	}
	if *workers < 1 || *workers > maxWorkers {
		fmt.Fprintf(stderr, "hyperflat worker: --workers must be 1 to %d\n", maxWorkers)
		return exitUsage
	}
	for _, id := range *runs {
		if id <= 0 {
			fmt.Fprintf(stderr, "hyperflat worker: --run %d: run IDs are positive (hyperflat runs lists them)\n", id)
			return exitUsage
		}
	}
	var st *store.Store
	open := func() (err error) { st, err = openStore(ctx, dsn); return err }
	var err error
	if wait.on {
		// A worker started while the database restarts (a pod restarted with it) waits too.
		err = experiments.WhileUnavailable(ctx, wait.outage(), logTo(stderr, *quiet), open)
	} else {
		err = open()
	}
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat worker: %v\n", err)
		return exitFailure
	}
	defer st.Close()
	r := &experiments.Runner{Store: st, Experiments: all.Experiments(), Workers: *workers, Lease: *sf.lease, Name: *name, DataDir: datasets.ResolveDir(*dataDir),
		Wait: wait.on, Outage: wait.outage(), AnyBuild: *anyBuild}
	r.Log = logTo(stderr, *quiet)
	var b *bars
	if f, ok := stderr.(*os.File); ok && !*quiet && isTerminal(f) {
		b = newBars(stderr, *workers)
		r.Monitor, r.Progress = b, b
	}
	n, err := r.Work(ctx, *runs...)
	if b != nil {
		b.Stop()
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "hyperflat worker: interrupted after %d cells; the cell in flight was handed back\n", n)
		} else {
			fmt.Fprintf(stderr, "hyperflat worker: %v (after %d cells)\n", err, n)
		}
		return exitFailure
	}
	fmt.Fprintf(stdout, "worker %s: computed %d cells\n", r.Name, n)
	if !*anyBuild {
		otherBuilds(ctx, st, *runs, stderr)
	}
	return exitOK
}

// logTo is where a worker notes the store's outages: stderr, unless quiet.
func logTo(stderr io.Writer, quiet bool) io.Writer {
	if quiet {
		return nil
	}
	return stderr
}

// otherBuilds says which runs in scope still have cells that this worker left because
// another build began them.
func otherBuilds(ctx context.Context, st *store.Store, scope []int64, stderr io.Writer) {
	runs, err := st.Runs(ctx)
	if err != nil {
		return
	}
	own := experiments.CodeVersion()
	for _, r := range runs {
		if r.Left() > 0 && r.Build != "" && r.Build != own && (len(scope) == 0 || slices.Contains(scope, r.ID)) {
			fmt.Fprintf(stderr, "hyperflat worker: run %d has %d cells left, begun by build %s; this is %s (--any-build computes them)\n", r.ID, r.Left(), r.Build, own)
		}
	}
}

// waitValue is worker's --wait[=D]: off, on for as long as it takes, or on with a bound on
// how long the store may stay unreachable.
type waitValue struct {
	on  bool
	max time.Duration // 0: no bound
}

func (w *waitValue) String() string {
	switch {
	case !w.on:
		return ""
	case w.max == 0:
		return "forever"
	}
	return w.max.String()
}

func (w *waitValue) Set(s string) error {
	switch s {
	case "forever", "true":
		*w = waitValue{on: true}
		return nil
	case "false":
		*w = waitValue{}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second {
		return fmt.Errorf("%q: want a duration of at least 1s (30s, 10m, 2h), or nothing for as long as it takes", s)
	}
	*w = waitValue{on: true, max: d}
	return nil
}

func (w *waitValue) Type() string { return "D" }

// outage is how long the runner rides out an unreachable store.
func (w *waitValue) outage() time.Duration {
	switch {
	case !w.on:
		return experiments.DefaultOutage
	case w.max == 0:
		return time.Duration(math.MaxInt64)
	}
	return w.max
}

func runRuns(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("runs")
	sf := addStoreFlags(fs, false)
	out := fs.String("out", "", "the --out directory of a run (its store is OUT/hyperflat.db)")
	format := fs.String("format", "table", "output format: table, csv or json")
	if code, ok := parse(fs, "runs [--store DSN | --out DIR] [--format table|csv|json]", args, stdout, stderr); !ok {
		return code
	}
	st, code := openExisting(ctx, "runs", sf.dsn(*out), *format, stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	runs, err := st.Runs(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat runs: %v\n", err)
		return exitFailure
	}
	rows := make([][]any, len(runs))
	for i, r := range runs {
		var wall any // unfinished: empty, null in JSON
		if !r.Started.IsZero() && !r.Finished.IsZero() {
			wall = seconds(r.Finished.Sub(r.Started))
		}
		rows[i] = []any{r.ID, r.Experiment, r.Status(), cellsDone{r.Done, r.Cells}, r.Failed, r.Running, wall,
			oneDecimal(r.CellSeconds), r.Created.Local().Format("2006-01-02 15:04:05"), runOptions(r), r.Identity}
	}
	header := []string{"Run", "Experiment", "Status", "Cells done", "Failed", "Running", "Wall time", "Cell seconds", "Created", "Options", "Identity"}
	if err := table(stdout, *format, header, rows); err != nil {
		fmt.Fprintf(stderr, "hyperflat runs: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// runRetire retires runs (store.Store.Retire) or, with --undo, reopens them.
func runRetire(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("retire")
	sf := addStoreFlags(fs, false)
	out := fs.String("out", "", "the --out directory of a run (its store is OUT/hyperflat.db)")
	runs := runIDs(fs, "the runs to retire (`IDs` as 3,4 or the flag repeated)")
	undo := fs.Bool("undo", false, "reopen the runs instead: their retired cells are pending again, each to go on from the progress it recorded")
	if code, ok := parse(fs, "retire --run ID,... [--undo] [--store DSN | --out DIR]", args, stdout, stderr); !ok {
		return code
	}
	if len(*runs) == 0 {
		fmt.Fprintln(stderr, "hyperflat retire: name the runs: --run ID,... (hyperflat runs lists them)")
		return exitUsage
	}
	st, code := openExistingMode(ctx, "retire", sf.dsn(*out), "table", true, stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	for _, id := range *runs {
		var n int
		var err error
		if *undo {
			n, err = st.Reopen(ctx, id)
		} else {
			n, err = st.Retire(ctx, id)
		}
		if err != nil {
			fmt.Fprintf(stderr, "hyperflat retire: %v\n", err)
			return exitFailure
		}
		r, err := st.GetRun(ctx, id)
		if err != nil {
			fmt.Fprintf(stderr, "hyperflat retire: %v\n", err)
			return exitFailure
		}
		what := "retired"
		if *undo {
			what = "reopened"
		}
		fmt.Fprintf(stdout, "run %d: %d cells %s; %s, %d/%d cells done\n", id, n, what, r.Status(), r.Done, r.Cells)
	}
	return exitOK
}

// cellsDone reads "3/10" and is {"done": 3, "cells": 10} in JSON, whose numbers stay numbers.
type cellsDone struct {
	Done  int `json:"done"`
	Cells int `json:"cells"`
}

func (c cellsDone) String() string { return fmt.Sprintf("%d/%d", c.Done, c.Cells) }

// seconds is a duration that reads as one ("1m5s") and is a number of seconds in JSON.
type seconds time.Duration

func (d seconds) String() string { return time.Duration(d).Round(time.Second).String() }

func (d seconds) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(time.Duration(d).Round(time.Millisecond).Seconds(), 'f', -1, 64)), nil
}

// oneDecimal is a number printed with one decimal.
type oneDecimal float64

func (x oneDecimal) String() string { return strconv.FormatFloat(float64(x), 'f', 1, 64) }

// runOptions summarizes a stored run's options: preset, seed, and the config flags that
// differ from the preset's defaults (defaults are noise in a list).
func runOptions(r store.Run) string {
	e, err := all.Experiments().Lookup(r.Experiment)
	if err != nil {
		return string(r.Options)
	}
	opt, err := experiments.DecodeOptions(e, r.Options)
	if err != nil {
		return string(r.Options)
	}
	parts := []string{"preset=" + opt.Preset, fmt.Sprintf("seed=%d", opt.Seed)}
	var defaults map[string]string
	if def, err := e.Resolve(experiments.Options{Preset: opt.Preset}); err == nil {
		defaults = experiments.FlagValues(def.Config)
	}
	var changed []string
	for k, v := range experiments.FlagValues(opt.Config) {
		if d, ok := defaults[k]; !ok || d != v {
			if v == "" {
				v = `""` // a flag's zero, which a run stored before the flag existed has
			}
			changed = append(changed, k+"="+v)
		}
	}
	sort.Strings(changed)
	return strings.Join(append(parts, changed...), " ")
}

// openExisting opens read-only the store a reading command (runs, report, export) names,
// after checking its --format: it writes nothing, not even a lock file, and works on a store
// this user cannot write. On failure it has reported the error and returns a nil store and the
// exit status.
func openExisting(ctx context.Context, cmd, dsn, format string, stderr io.Writer) (*store.Store, int) {
	return openExistingMode(ctx, cmd, dsn, format, false, stderr)
}

// openExistingMode is openExisting, or with write for a command that changes an existing
// store (retire), a writing open.
func openExistingMode(ctx context.Context, cmd, dsn, format string, write bool, stderr io.Writer) (*store.Store, int) {
	if err := validFormat(format); err != nil {
		fmt.Fprintf(stderr, "hyperflat %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	if dsn == "" {
		fmt.Fprintf(stderr, "hyperflat %s: name a store: --store DSN, --out DIR or $%s\n", cmd, EnvStore)
		return nil, exitUsage
	}
	if err := storeExists(dsn); err != nil {
		fmt.Fprintf(stderr, "hyperflat %s: %v\n", cmd, err)
		return nil, exitFailure
	}
	var st *store.Store
	var err error
	if write {
		st, err = openStore(ctx, dsn)
	} else {
		st, err = store.OpenReadOnly(ctx, dsn)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat %s: %v\n", cmd, err)
		return nil, exitFailure
	}
	return st, exitOK
}

// storeExists refuses to report on a SQLite file that does not exist (opening would create it).
func storeExists(dsn string) error {
	if store.IsPostgres(dsn) {
		return nil
	}
	path, _, err := store.SQLitePath(dsn)
	if err != nil {
		return err
	}
	if path == "" {
		return fmt.Errorf("no store in %s: an in-memory database lives only as long as the run that made it", dsn)
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no store at %s (a run with --out DIR or --store PATH makes one)", path)
	}
	return nil
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("report")
	sf := addStoreFlags(fs, false)
	out := fs.String("out", "", "the --out directory of a run (its store is OUT/hyperflat.db)")
	run := fs.Int64("run", 0, "the run to report (default: the latest; hyperflat runs lists them)")
	plots := fs.String("plots", "", "draw the run's PNG figures into this directory")
	dataDir := fs.String("data-dir", "", "dataset directory, needed only to assemble a finished run that never was")
	format := fs.String("format", "table", "output format: table, csv or json")
	verbose := fs.BoolP("verbose", "v", false, "print every table, not only the headline ones (with --format table)")
	bayesmarkOut := fs.String("bayesmark-out", "", "write an ahsc run's Bayesmark cells in Bayesmark's output layout under this directory")
	markdown := fs.String("markdown", "", "write the published tables of the stored runs (or of --run): AHSC Table 1 as DIR/table1.md and .csv from the ahsc runs, PAC-Bayes Table C.1 as DIR/tablec1.md, CSVs and PNGs from the weightdecay runs")
	if code, ok := parse(fs, "report [--store DSN | --out DIR] [--run ID] [--plots DIR] [--bayesmark-out DIR] [--format table|csv|json] [--verbose] [--markdown DIR]", args, stdout, stderr); !ok {
		return code
	}
	st, code := openExisting(ctx, "report", sf.dsn(*out), *format, stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	if *markdown != "" {
		return writeTable1(ctx, st, *run, datasets.ResolveDir(*dataDir), *markdown, markdownCommand(args, *markdown), stdout, stderr)
	}
	res, _, err := experiments.Report(ctx, st, all.Experiments(), *run, datasets.ResolveDir(*dataDir))
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat report: %v\n", err)
		return exitFailure
	}
	if *plots != "" {
		paths, err := all.Experiments().Plots(res, *plots)
		if err != nil {
			fmt.Fprintf(stderr, "hyperflat report: %v\n", err)
			return exitFailure
		}
		res.Artifacts = paths
	}
	if *bayesmarkOut != "" {
		if err := writeBayesmark(res, *bayesmarkOut, stderr); err != nil {
			fmt.Fprintf(stderr, "hyperflat report: %v\n", err)
			return exitFailure
		}
	}
	if err := writeResult(stdout, res, *format, *verbose); err != nil {
		fmt.Fprintf(stderr, "hyperflat report: %v\n", err)
		return exitFailure
	}
	return exitOK
}
