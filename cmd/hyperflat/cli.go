package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/olekukonko/tablewriter"
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
		{"report", "print a stored run's tables and draw its figures, without recomputing", runReport},
		{"trial", "train and score one configuration of the ahsc objective (a Katib trial)", runTrial},
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

// parse parses a command's flags. It reports whether the command should go on and, if not,
// the exit status: 0 after --help, 2 after a usage error (with the usage on stderr).
func parse(fs *pflag.FlagSet, synopsis string, args []string, stdout, stderr io.Writer) (int, bool) {
	printUsage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: hyperflat %s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
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

// table writes rows under header as a terminal table, CSV or JSON (an array of objects keyed
// by the header).
func table(w io.Writer, format string, header []string, rows [][]string) error {
	switch format {
	case "table":
		t := tablewriter.NewWriter(w)
		t.Header(header)
		for _, r := range rows {
			if err := t.Append(r); err != nil {
				return err
			}
		}
		return t.Render()
	case "csv":
		c := csv.NewWriter(w)
		if err := c.Write(header); err != nil {
			return err
		}
		if err := c.WriteAll(rows); err != nil {
			return err
		}
		c.Flush()
		return c.Error()
	case "json":
		objs := make([]map[string]string, len(rows))
		for i, r := range rows {
			objs[i] = make(map[string]string, len(header))
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
	fmt.Fprintf(stdout, "hyperflat %s\n%s %s/%s\ngorgonia %s\nblas %s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH, gorgonia, graph.BLAS)
	return exitOK
}

func runList(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("list")
	format := fs.String("format", "table", "output format: table, csv or json")
	if code, ok := parse(fs, "list [--format table|csv|json]", args, stdout, stderr); !ok {
		return code
	}
	if err := validFormat(*format); err != nil {
		fmt.Fprintf(stderr, "hyperflat list: %v\n", err)
		return exitUsage
	}
	all := experiments.All()
	rows := make([][]string, len(all))
	for i, e := range all {
		var fl []string
		for _, p := range e.Params {
			fl = append(fl, "--"+p.Name)
		}
		rows[i] = []string{e.Name, string(e.Paper), strings.Join(fl, " "), e.Description}
	}
	if err := table(stdout, *format, []string{"Name", "Paper", "Flags", "Description"}, rows); err != nil {
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
	rows := make([][]string, len(results))
	for i, r := range results {
		verdict := "pass"
		if !r.Passed() {
			verdict = "FAIL"
			failed++
		}
		rows[i] = []string{r.Name, fmt.Sprintf("%.2e", r.First.MaxRelErr), fmt.Sprintf("%.2e", r.Second.MaxRelErr), verdict}
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

func runExperiment(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	synopsis := "run NAME [--preset quick|paper] [--seed N] [--repeats N] [--workers N] [--data-dir DIR] [--out DIR] " +
		"[--store DSN] [--resume] [--shard I/N] [--submit] [--format table|csv|json] [--quiet] [experiment flags]"
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintf(stdout, "Usage: hyperflat %s\n\nExperiments:\n", synopsis)
			for _, e := range experiments.All() {
				fmt.Fprintf(stdout, "  %-12s %s\n", e.Name, e.Description)
			}
			return exitOK
		}
		fmt.Fprintf(stderr, "hyperflat run: name an experiment (hyperflat list shows them)\n\nUsage: hyperflat %s\n", synopsis)
		return exitUsage
	}
	exp, err := experiments.Lookup(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat run: %v\n", err)
		return exitUsage
	}
	fs := flags("run " + exp.Name)
	preset := fs.String("preset", experiments.Quick, "quick (minutes on 2 cores) or paper (the published protocol)")
	seed := fs.Uint64("seed", 1, "seed of every random draw")
	repeats := fs.Int("repeats", 0, "independent repeats (0: the preset's default)")
	workers := fs.Int("workers", 1, "parallel workers (results do not depend on it)")
	dataDir := fs.String("data-dir", "", "dataset directory (default $"+datasets.EnvDataDir+", then the project's data folder)")
	out := fs.String("out", "", "directory for CSV, JSON and PNG artifacts, and the default store OUT/hyperflat.db")
	sf := addStoreFlags(fs)
	resume := fs.Bool("resume", false, "continue the latest stored run with the same options: finished cells are kept, failed ones retried")
	shard := fs.String("shard", "", "compute only shard I of N (cells whose index is I mod N; 0-based), e.g. a Kubernetes Indexed Job's index")
	submit := fs.Bool("submit", false, "only record the run's cells in the store, for hyperflat worker processes to compute")
	maxMem := fs.String("max-mem", "", "refuse configurations whose training would hold more than this (e.g. 2GiB), before building them")
	trialTimeout := fs.Duration("trial-timeout", 0, "fail any single trial that trains longer than this (e.g. 10m; results then depend on the machine's speed)")
	format := fs.String("format", "table", "output format: table, csv or json")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	own := map[string]*string{}
	for _, p := range exp.Params {
		usage := p.Usage
		if len(p.Choices) > 0 {
			usage += " (" + strings.Join(p.Choices, "|") + ")"
		}
		own[p.Name] = fs.String(p.Name, p.Default, usage)
	}
	if code, ok := parse(fs, strings.Replace(synopsis, "NAME", exp.Name, 1), args[1:], stdout, stderr); !ok {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hyperflat run %s: %s\n", exp.Name, fmt.Sprintf(format, a...))
		return exitUsage
	}
	if err := validFormat(*format); err != nil {
		return usageErr("%v", err)
	}
	if *workers < 1 {
		return usageErr("--workers %d; want at least 1", *workers)
	}
	var mode experiments.Mode
	mode.Resume, mode.Submit = *resume, *submit
	if *shard != "" {
		if mode.Shard, mode.Shards, err = parseShard(*shard); err != nil {
			return usageErr("--shard: %v", err)
		}
	}
	dsn := sf.dsn(*out)
	if dsn == "" && (mode.Resume || mode.Submit || mode.Shards > 0) {
		return usageErr("--resume, --shard and --submit need a store: --store DSN or --out DIR")
	}
	if err := sf.check(); err != nil {
		return usageErr("%v", err)
	}
	if *trialTimeout < 0 {
		return usageErr("--trial-timeout %v: want a positive duration, or 0 for none", *trialTimeout)
	}
	opt := experiments.Options{Preset: *preset, Seed: *seed, Repeats: *repeats, Workers: *workers,
		DataDir: datasets.ResolveDir(*dataDir), Out: *out, Params: map[string]string{}, TrialTimeout: *trialTimeout}
	if *maxMem != "" {
		if opt.MaxMem, err = experiments.ParseBytes(*maxMem); err != nil {
			return usageErr("--max-mem %v", err)
		}
	}
	fs.Visit(func(f *pflag.Flag) {
		if _, ok := own[f.Name]; ok {
			opt.Params[f.Name] = f.Value.String()
		}
	})
	if opt, err = exp.Resolve(opt); err != nil {
		return usageErr("%v", err)
	}
	var b *bars
	if f, ok := stderr.(*os.File); ok && !*quiet && isTerminal(f) {
		b = newBars(stderr, *workers)
		defer b.Stop()
	}
	fail := func(err error) int {
		if b != nil {
			b.Stop()
		}
		var fe *experiments.FlagError
		if errors.As(err, &fe) {
			fmt.Fprintf(stderr, "hyperflat run %s: %v\n", exp.Name, fe)
			return exitUsage
		}
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "hyperflat run %s: interrupted", exp.Name)
			if dsn != "" {
				fmt.Fprintf(stderr, "; finished cells are stored: add --resume to continue")
			}
			fmt.Fprintln(stderr)
		} else {
			fmt.Fprintf(stderr, "hyperflat run %s: %v\n", exp.Name, err)
		}
		return exitFailure
	}
	if dsn == "" {
		if b != nil {
			opt.Progress, opt.Monitor = b, b
		}
		res, err := exp.Run(ctx, opt)
		if err != nil {
			return fail(err)
		}
		if b != nil {
			b.Stop()
		}
		if err := res.Write(stdout, *format); err != nil {
			return fail(err)
		}
		return exitOK
	}
	st, err := openStore(ctx, dsn)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	r := &experiments.Runner{Store: st, Workers: *workers, Lease: *sf.lease, DataDir: opt.DataDir}
	if b != nil {
		r.Monitor, r.Progress = b, b
	}
	status, err := r.Start(ctx, exp, opt, mode)
	if err != nil {
		return fail(err)
	}
	if b != nil {
		b.Stop()
	}
	switch {
	case mode.Submit:
		fmt.Fprintf(stdout, "run %d (%s): %d cells in %s (%d already done)\n", status.Run.ID, status.Run.Identity, status.Run.Cells, st.DSN(), status.Run.Done)
		fmt.Fprintf(stdout, "compute them with: hyperflat worker --store '%s' --run %d\n", st.DSN(), status.Run.ID)
		return exitOK
	case status.Result == nil:
		fmt.Fprintf(stderr, "hyperflat run %s: shard %d/%d computed %d cells; run %d has %d of %d cells done. "+
			"The last shard to finish prints the tables; or: hyperflat report --store '%s' --run %d\n",
			exp.Name, mode.Shard, mode.Shards, status.Computed, status.Run.ID, status.Run.Done, status.Run.Cells, st.DSN(), status.Run.ID)
		return exitOK
	}
	if err := status.Result.Write(stdout, *format); err != nil {
		return fail(err)
	}
	return exitOK
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
