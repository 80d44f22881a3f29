package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/internal/gcpolicy"
	"github.com/hyperflat/hyperflat/internal/textable"
	"github.com/hyperflat/hyperflat/store"
	"github.com/spf13/pflag"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"version", "print the version of hyperflat, Go, gorgonia and the BLAS in use", runVersion},
		{"list", "list the registered experiments", runList},
		{"check", "run first- and second-order gradient checks of every graph op", runCheck},
		{"run", "run an experiment: hyperflat run NAME [flags]", runExperiment},
		{"worker", "compute cells of runs in a shared store (PostgreSQL or SQLite)", runWorker},
		{"runs", "list the runs in a store with their status", runRuns},
		{"retire", "take runs' unfinished cells out of the work (a superseded run); --undo reopens them", runRetire},
		{"report", "print a stored run's tables and draw its figures, without recomputing", runReport},
		{"export", "write a store's runs as text (JSON lines, gzip in a directory) to keep or move them", runExport},
		{"import", "read exported runs into a store, creating them or filling the cells it lacks", runImport},
		{"serve", "a read-only web dashboard of a store's runs, live while workers fill it", runServe},
		{"trial", "train and score one configuration of the ahsc objective (a Katib trial)", runTrial},
		{"bayesmark", "score Bayesmark's own output folders (bayesmark score DIR...) as report scores its runs", runBayesmark},
		{"data", "list the registry's datasets and their state; data fetch NAME|all downloads them", runData},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "hyperflat: white-box hyperparameter optimization on gorgonia graphs")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: hyperflat <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "hyperflat <command> --help" for a command's flags.`)
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(stdout)
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A bug must not print a Go panic trace at a user: say what happened and fail.
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "hyperflat: internal error: %v\n(this is a bug; please report it with the command line)\n", p)
			code = exitFailure
		}
	}()
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hyperflat: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// flags makes a command's flag set, which prints nothing itself: parse reports errors.
func flags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	fs.BoolP("help", "h", false, "show this help")
	return fs
}

// statusWords explains, in a command's --help, every status word its table prints, so that a
// reader meets none that only a source comment explains.
var statusWords = map[string]string{
	"runs": `Status:
  finished     every cell done and the assembled result stored
  running      cells are claimed or done, others still to compute (hyperflat worker goes on)
  pending      no cell claimed or done yet (a --submit run waiting for workers)
  failed       every cell ended, some failed (run --resume retries them)
  unassembled  every cell done but the result not assembled yet: a run imported from exports,
               or one whose last worker stopped; hyperflat report reads it as it is, and
               run --resume with the same options assembles it
  retired      its unfinished cells were taken out of the work (hyperflat retire; --undo
               reopens it)
`,
	"data": `Status:
  present                      every file is there with its published checksum
  missing                      not in the data directory (hyperflat data fetch NAME gets it)
  missing (embedded copy used) not in the data directory; the copy built into hyperflat is used
  missing K of N files         some of the dataset's files are there, K are not
  checksum mismatch: FILE      FILE is there but differs from the published one (refetch it)
`,
	"check": `Result:
  pass  both derivative orders agree with finite differences within the tolerance
  FAIL  an order disagrees: the operator's gradient is wrong (the command exits 1)
`,
}

// parse parses a command's flags. It reports whether the command should go on and, if not,
// the exit status: 0 after --help, 2 after a usage error (with the usage on stderr).
func parse(fs *pflag.FlagSet, synopsis string, args []string, stdout, stderr io.Writer) (int, bool) {
	printUsage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: hyperflat %s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
		if words := statusWords[fs.Name()]; words != "" {
			fmt.Fprintf(w, "\n%s", words)
		}
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "hyperflat %s: %v\n\n", fs.Name(), err)
		printUsage(stderr)
		return exitUsage, false
	}
	if h, _ := fs.GetBool("help"); h {
		printUsage(stdout)
		return exitOK, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hyperflat %s: unexpected argument %q\n\n", fs.Name(), fs.Arg(0))
		printUsage(stderr)
		return exitUsage, false
	}
	return exitOK, true
}

// table writes rows under header as a terminal table (fitting textable.Width), CSV or JSON
// (an array of objects keyed by the header in snake case). Cells are strings or numbers, and
// stay numbers in JSON; a cell's text is its fmt.Sprint, so a type with a String method
// chooses how it reads and still encodes as its JSON value.
func table(w io.Writer, format string, header []string, rows [][]any) error {
	text := func(r []any) []string {
		out := make([]string, len(r))
		for i, c := range r {
			if c != nil {
				out[i] = fmt.Sprint(c)
			}
		}
		return out
	}
	switch format {
	case "table":
		lines := make([][]string, len(rows))
		for i, r := range rows {
			lines[i] = text(r)
		}
		return textable.Render(w, header, lines, textable.Width)
	case "csv":
		c := csv.NewWriter(w)
		if err := c.Write(header); err != nil {
			return err
		}
		for _, r := range rows {
			if err := c.Write(text(r)); err != nil {
				return err
			}
		}
		c.Flush()
		return c.Error()
	case "json":
		objs := make([]map[string]any, len(rows))
		for i, r := range rows {
			objs[i] = make(map[string]any, len(header))
			for j, h := range header {
				objs[i][strings.ToLower(strings.ReplaceAll(h, " ", "_"))] = r[j]
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(objs)
	}
	return fmt.Errorf("unknown format %q", format)
}

// sci is a number printed in scientific notation with three digits (a relative error), and
// a plain number in JSON: null when it is not finite (a check whose derivative is NaN), as
// JSON has no NaN.
type sci float64

func (x sci) String() string { return fmt.Sprintf("%.2e", float64(x)) }

func (x sci) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(x), 'g', -1, 64)), nil
}

func validFormat(f string) error {
	switch f {
	case "table", "csv", "json":
		return nil
	}
	return fmt.Errorf("--format must be table, csv or json, not %q", f)
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("version")
	if code, ok := parse(fs, "version", args, stdout, stderr); !ok {
		return code
	}
	version, gorgonia := "(devel)", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == "gorgonia.org/gorgonia" {
				gorgonia = d.Version
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && version == "(devel)" {
				version += " " + s.Value
			}
		}
	}
	// build is what runs and cells record of this binary (a worker computes only its own build's runs).
	fmt.Fprintf(stdout, "hyperflat %s\n%s %s/%s\ngorgonia %s\nblas %s\ngc %s\nbuild %s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH, gorgonia, graph.BLAS, gcInEffect(), experiments.CodeVersion())
	return exitOK
}

func runList(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("list")
	format := fs.String("format", "table", "output format: table, csv or json")
	verbose := fs.BoolP("verbose", "v", false, "one row per experiment flag, with its defaults in each preset")
	if code, ok := parse(fs, "list [--verbose] [--format table|csv|json]", args, stdout, stderr); !ok {
		return code
	}
	if err := validFormat(*format); err != nil {
		fmt.Fprintf(stderr, "hyperflat list: %v\n", err)
		return exitUsage
	}
	var rows [][]any
	for _, e := range all.Experiments() {
		if *verbose {
			for _, f := range e.Fields() {
				rows = append(rows, []any{e.Name, "--" + f.Name, f.Defaults(), f.Usage})
			}
			continue
		}
		var fl []string
		for _, f := range e.Fields() {
			fl = append(fl, "--"+f.Name)
		}
		rows = append(rows, []any{e.Name, string(e.Paper), strings.Join(fl, " "), e.Description})
	}
	header := []string{"Name", "Paper", "Flags", "Description"}
	if *verbose {
		header = []string{"Experiment", "Flag", "Default", "Meaning"}
	}
	if err := table(stdout, *format, header, rows); err != nil {
		fmt.Fprintf(stderr, "hyperflat list: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("check")
	seed := fs.Uint64("seed", 1, "seed for the check inputs, output weights and directions")
	tol := fs.Float64("tol", 1e-5, "largest relative error that passes")
	step := fs.Float64("step", 1e-4, "finite-difference step")
	only := fs.String("only", "", "check only the ops whose name matches this regular expression")
	format := fs.String("format", "table", "output format: table, csv or json")
	if code, ok := parse(fs, "check [--seed N] [--tol X] [--step H] [--only REGEXP] [--format table|csv|json]", args, stdout, stderr); !ok {
		return code
	}
	if err := validFormat(*format); err != nil {
		fmt.Fprintf(stderr, "hyperflat check: %v\n", err)
		return exitUsage
	}
	if *tol <= 0 || *step <= 0 {
		fmt.Fprintln(stderr, "hyperflat check: --tol and --step must be positive")
		return exitUsage
	}
	re, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat check: --only: %v\n", err)
		return exitUsage
	}
	var cases []graph.OpCase
	for _, c := range graph.OpCases() {
		if re.MatchString(c.Name) {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		fmt.Fprintf(stderr, "hyperflat check: no op matches %q\n", *only)
		return exitUsage
	}
	results, err := graph.CheckOps(ctx, cases, graph.CheckOptions{Seed: *seed, Tol: *tol, Step: *step})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "hyperflat check: interrupted")
		} else {
			fmt.Fprintf(stderr, "hyperflat check: %v\n", err)
		}
		return exitFailure
	}
	failed := 0
	rows := make([][]any, len(results))
	for i, r := range results {
		verdict := "pass"
		if !r.Passed() {
			verdict = "FAIL"
			failed++
		}
		rows[i] = []any{r.Name, sci(r.First.MaxRelErr), sci(r.Second.MaxRelErr), verdict}
	}
	if err := table(stdout, *format, []string{"Op", "1st order max rel err", "2nd order max rel err", "Result"}, rows); err != nil {
		fmt.Fprintf(stderr, "hyperflat check: %v\n", err)
		return exitFailure
	}
	if *format == "table" {
		fmt.Fprintf(stdout, "%d of %d ops pass first- and second-order finite-difference checks (float64, relative error ≤ %.0e)\n", len(results)-failed, len(results), *tol)
	}
	if failed > 0 {
		return exitFailure
	}
	return exitOK
}

// isTerminal reports whether f is a character device (a terminal), where progress is shown.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runFlags are the flags every experiment's run command takes.
type runFlags struct {
	preset, dataDir, out, shard, maxMem, format *string
	bayesmarkOut                                *string
	seed                                        *uint64
	workers                                     *int
	resume, submit, quiet, verbose, anyBuild    *bool
	trialTimeout                                *time.Duration
	store                                       storeFlags
	own                                         map[string]bool // the experiment's config flags
}

const runSynopsis = "run NAME [--preset quick|paper] [--seed N] [--workers N] [--data-dir DIR] [--out DIR] [--bayesmark-out DIR (ahsc)] " +
	"[--store DSN] [--resume] [--any-build] [--shard I/N] [--submit] [--format table|csv|json] [--verbose] [--quiet] [experiment flags]"

func addRunFlags(fs *pflag.FlagSet, exp experiments.Experiment) runFlags {
	f := runFlags{
		preset:  fs.String("preset", experiments.Quick, "quick (minutes on 2 cores) or paper (the published protocol): the experiment flags' defaults"),
		seed:    fs.Uint64("seed", 1, "root seed of every random stream"),
		workers: fs.Int("workers", 1, "parallel workers (results do not depend on it)"),
		dataDir: fs.String("data-dir", "", "dataset directory (default $"+datasets.EnvDataDir+", then the project's data folder)"),
		out:     fs.String("out", "", "directory for CSV, JSON and PNG artifacts, and the default store OUT/hyperflat.db"),
	}
	f.store = addStoreFlags(fs, true)
	f.resume = fs.Bool("resume", false, "continue the latest stored run with the same options: finished cells are kept, failed ones retried")
	f.anyBuild = fs.Bool("any-build", false, "with --resume or --shard, go on with a run begun by another build of hyperflat (hyperflat version names this one), mixing two builds' arithmetic in one run")
	f.shard = fs.String("shard", "", "compute only shard I of N (cells whose index is I mod N; 0-based), e.g. a Kubernetes Indexed Job's index")
	f.submit = fs.Bool("submit", false, "only record the run's cells in the store, for hyperflat worker processes to compute")
	f.maxMem = fs.String("max-mem", "", "refuse configurations whose training (with --whitebox, its record included) would hold more than this (e.g. 2GiB), before building them")
	f.trialTimeout = fs.Duration("trial-timeout", 0, "fail any single trial that trains longer than this (e.g. 10m; results then depend on the machine's speed)")
	f.format = fs.String("format", "table", "output format: table, csv or json")
	if exp.Name == "ahsc" {
		f.bayesmarkOut = fs.String("bayesmark-out", "", "also write the Bayesmark cells in Bayesmark's output layout under this directory (hyperflat bayesmark score and Bayesmark's analysis read it)")
	}
	f.verbose = fs.BoolP("verbose", "v", false, "print every table, not only the headline ones (with --format table)")
	f.quiet = fs.Bool("quiet", false, "no progress on stderr")
	f.own = map[string]bool{}
	for _, fld := range exp.Fields() {
		f.own[fld.Name] = true
		fs.Var(&configValue{typ: fld.Type}, fld.Name, fld.HelpText())
		if fld.Type == "bool" { // --skip-missing alone means true, as pflag's own booleans
			fs.Lookup(fld.Name).NoOptDefVal = "true"
		}
	}
	return f
}

// configValue holds an experiment flag's text until the experiment's config parses it, so that
// the config's own parser (and its errors) is the only one; Type names the value's kind in
// help.
type configValue struct{ text, typ string }

func (v *configValue) String() string     { return v.text }
func (v *configValue) Set(s string) error { v.text = s; return nil }
func (v *configValue) Type() string       { return v.typ }

// maxWorkers bounds --workers: each worker is a goroutine that may hold a cell's model, and
// a run allocates its slots up front.
const maxWorkers = 4096

// options turns the parsed flags into the run's options and mode; errors are usage errors.
func (f runFlags) options(fs *pflag.FlagSet, exp experiments.Experiment) (experiments.Options, experiments.Mode, string, error) {
	var mode experiments.Mode
	opt := experiments.Options{Preset: *f.preset, Seed: *f.seed, Workers: *f.workers,
		DataDir: datasets.ResolveDir(*f.dataDir), Out: *f.out, TrialTimeout: *f.trialTimeout}
	if err := validFormat(*f.format); err != nil {
		return opt, mode, "", err
	}
	if err := experiments.CheckRange("workers", *f.workers, 1, maxWorkers); err != nil {
		return opt, mode, "", err
	}
	mode.Resume, mode.Submit = *f.resume, *f.submit
	if *f.shard != "" {
		var err error
		if mode.Shard, mode.Shards, err = parseShard(*f.shard); err != nil {
			return opt, mode, "", fmt.Errorf("--shard: %v", err)
		}
	}
	dsn := f.store.dsn(*f.out)
	if dsn == "" && (mode.Resume || mode.Submit || mode.Shards > 0) {
		return opt, mode, "", fmt.Errorf("--resume, --shard and --submit need a store: --store DSN or --out DIR")
	}
	if err := f.store.check(); err != nil {
		return opt, mode, "", err
	}
	if *f.trialTimeout < 0 {
		return opt, mode, "", fmt.Errorf("--trial-timeout %v: want a positive duration, or 0 for none", *f.trialTimeout)
	}
	if *f.maxMem != "" {
		var err error
		if opt.MaxMem, err = parseBytes(*f.maxMem); err != nil {
			return opt, mode, "", fmt.Errorf("--max-mem %v", err)
		}
	}
	set := map[string]string{}
	fs.Visit(func(fl *pflag.Flag) {
		if _, ok := f.own[fl.Name]; ok {
			set[fl.Name] = fl.Value.String()
		}
	})
	cfg, err := exp.Configure(opt.Preset, set)
	if err != nil {
		return opt, mode, "", err
	}
	opt.Config = cfg
	opt, err = exp.Resolve(opt)
	return opt, mode, dsn, err
}

func runUsage(stdout, stderr io.Writer, args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintf(stdout, "Usage: hyperflat %s\n\nExperiments:\n", runSynopsis)
		for _, e := range all.Experiments() {
			fmt.Fprintf(stdout, "  %-12s %s\n", e.Name, e.Description)
		}
		return exitOK
	}
	fmt.Fprintf(stderr, "hyperflat run: name an experiment (hyperflat list shows them)\n\nUsage: hyperflat %s\n", runSynopsis)
	return exitUsage
}

func runExperiment(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return runUsage(stdout, stderr, args)
	}
	exp, err := all.Experiments().Lookup(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat run: %v\n", err)
		return exitUsage
	}
	fs := flags("run " + exp.Name)
	rf := addRunFlags(fs, exp)
	if code, ok := parse(fs, strings.Replace(runSynopsis, "NAME", exp.Name, 1), args[1:], stdout, stderr); !ok {
		return code
	}
	opt, mode, dsn, err := rf.options(fs, exp)
	if err == nil && rf.bayesmarkOut != nil && *rf.bayesmarkOut != "" {
		if c, ok := opt.Config.(*ahsc.Config); ok && len(c.BayesmarkDatasets()) == 0 {
			err = fmt.Errorf("--bayesmark-out: the run has none of Bayesmark's datasets (breast, digits, iris, wine)")
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat run %s: %v\n", exp.Name, err)
		return exitUsage
	}
	var b *bars
	if f, ok := stderr.(*os.File); ok && !*rf.quiet && isTerminal(f) {
		b = newBars(stderr, *rf.workers)
		defer b.Stop()
	}
	fail := func(err error) int {
		if b != nil {
			b.Stop()
		}
		return runFailure(stderr, exp.Name, dsn, err)
	}
	var res *experiments.Result
	if dsn == "" {
		if b != nil {
			opt.Progress, opt.Monitor = b, b
		}
		if res, err = exp.Run(ctx, opt); err != nil {
			return fail(err)
		}
	} else {
		var done bool
		if res, done, err = runStored(ctx, exp, opt, mode, dsn, *rf.workers, *rf.store.lease, *rf.anyBuild, b, stdout, stderr); err != nil || done {
			if err != nil {
				return fail(err)
			}
			return exitOK
		}
	}
	if b != nil {
		b.Stop()
	}
	if rf.bayesmarkOut != nil && *rf.bayesmarkOut != "" {
		if err := writeBayesmark(res, *rf.bayesmarkOut, stderr); err != nil {
			return fail(err)
		}
	}
	if err := writeResult(stdout, res, *rf.format, *rf.verbose); err != nil {
		return fail(err)
	}
	return exitOK
}

// writeResult prints a result in the format; verbose asks the terminal view for every table.
func writeResult(w io.Writer, res *experiments.Result, format string, verbose bool) error {
	if format == "table" {
		return res.WriteTables(w, verbose)
	}
	return res.Write(w, format)
}

// runFailure reports a failed run: a flag mistake is a usage error, an interruption says how
// to resume.
func runFailure(stderr io.Writer, name, dsn string, err error) int {
	var fe *experiments.FlagError
	if errors.As(err, &fe) {
		fmt.Fprintf(stderr, "hyperflat run %s: %v\n", name, fe)
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "hyperflat run %s: interrupted", name)
		if dsn != "" {
			fmt.Fprintf(stderr, "; finished cells are stored: add --resume to continue")
		}
		fmt.Fprintln(stderr)
	} else {
		fmt.Fprintf(stderr, "hyperflat run %s: %v\n", name, err)
	}
	return exitFailure
}

// runStored runs through the store at dsn. It returns the result to print, or done when
// there is nothing to print (a submitted run, a shard that finished before the others).
func runStored(ctx context.Context, exp experiments.Experiment, opt experiments.Options, mode experiments.Mode, dsn string,
	workers int, lease time.Duration, anyBuild bool, b *bars, stdout, stderr io.Writer) (*experiments.Result, bool, error) {
	st, err := openStore(ctx, dsn)
	if err != nil {
		return nil, false, err
	}
	defer st.Close()
	r := &experiments.Runner{Store: st, Experiments: all.Experiments(), Workers: workers, Lease: lease, DataDir: opt.DataDir, AnyBuild: anyBuild}
	if b != nil {
		r.Monitor, r.Progress = b, b
	}
	if !mode.Resume && mode.Shards == 0 {
		finishedBefore(ctx, st, exp.Name, opt, stderr)
	}
	status, err := r.Start(ctx, exp, opt, mode)
	if err != nil {
		return nil, false, err
	}
	switch {
	case mode.Submit:
		fmt.Fprintf(stdout, "run %d (%s): %d cells in %s (%d already done)\n", status.Run.ID, status.Run.Identity, status.Run.Cells, st.DSN(), status.Run.Done)
		fmt.Fprintf(stdout, "compute them with: hyperflat worker --store '%s' --run %d\n", st.DSN(), status.Run.ID)
		return nil, true, nil
	case status.Result == nil:
		fmt.Fprintf(stderr, "hyperflat run %s: shard %d/%d computed %d cells; run %d has %d of %d cells done. "+
			"The last shard to finish prints the tables; or: hyperflat report --store '%s' --run %d\n",
			exp.Name, mode.Shard, mode.Shards, status.Computed, status.Run.ID, status.Run.Done, status.Run.Cells, st.DSN(), status.Run.ID)
		return nil, true, nil
	}
	return status.Result, false, nil
}

// finishedBefore warns when the store already holds a finished run with this run's identity:
// the new run will compute the same cells again, which is rarely what was meant.
func finishedBefore(ctx context.Context, st *store.Store, name string, opt experiments.Options, stderr io.Writer) {
	id, err := experiments.Identity(name, opt)
	if err != nil {
		return // the run itself reports it
	}
	prev, ok, err := st.FindRun(ctx, id)
	if err != nil || !ok || !prev.HasResult {
		return
	}
	fmt.Fprintf(stderr, "hyperflat run %s: run %d in this store finished with the same options (%s);\n"+
		"  this starts a new run that computes it again. To print its tables without recomputing:\n"+
		"    hyperflat report --store '%s' --run %d\n"+
		"  or add --resume to reuse it instead.\n", name, prev.ID, prev.Identity, st.DSN(), prev.ID)
}

// parseShard reads "I/N" with 0 ≤ I < N.
func parseShard(s string) (int, int, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q; want I/N, e.g. 0/4", s)
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(i))
	b, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil || b < 1 || a < 0 || a >= b {
		return 0, 0, fmt.Errorf("%q; want I/N with 0 ≤ I < N, e.g. 0/4", s)
	}
	return a, b, nil
}

// gcInEffect describes the garbage collector's settings in effect (package gcpolicy sets them
// at start-up unless GOGC or GOMEMLIMIT did).
func gcInEffect() string {
	s := "GOGC=off"
	if pct := gcpolicy.GOGC(); pct >= 0 {
		s = fmt.Sprintf("GOGC=%d", pct)
	}
	if gcpolicy.Tuning() {
		s += fmt.Sprintf(" at this live heap (gcpolicy: headroom at most %d MiB or the live heap, whichever is more)", gcpolicy.Headroom>>20)
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		s += ", soft memory limit " + convexity.FormatBytes(lim)
	}
	return s
}
