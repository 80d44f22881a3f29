package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/spf13/pflag"
)

// hyperflat bayesmark: Bayesmark's own output folders (uber/bayesmark's layout) read and
// scored with the scorer `report` uses (experiments/ahsc/bayesmark.go).

const bayesmarkSynopsis = "bayesmark score|picks [flags] DIR... (or, with --git-dir, COMMIT:PATH-GLOB...)"

func runBayesmark(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		w, code := stderr, exitUsage
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			w, code = stdout, exitOK
		}
		fmt.Fprintf(w, "Usage: hyperflat %s\n\n"+
			"  score  each optimizer's Bayesmark score per problem (mean and median, bootstrap 95%% intervals)\n"+
			"  picks  the quartiles of a hyperparameter's suggested values per optimizer (suggest_log/)\n", bayesmarkSynopsis)
		return code
	}
	switch args[0] {
	case "score":
		return runBayesmarkScore(ctx, args[1:], stdout, stderr)
	case "picks":
		return runBayesmarkPicks(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "hyperflat bayesmark: unknown subcommand %q: want score or picks\n", args[0])
	return exitUsage
}

// bmSource is one Bayesmark database folder to read: its file system, its folder there, the
// name it is shown by, and the commit it was read from ("" for a directory).
type bmSource struct {
	fsys         fs.FS
	dir, display string
	commit       string
}

// bayesmarkSources resolves the arguments: directories, and with gitDir the arguments
// COMMIT:GLOB, read from that commit of gitDir (the other arguments stay directories).
func bayesmarkSources(ctx context.Context, gitDir string, args []string) ([]bmSource, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("name at least one Bayesmark output folder")
	}
	if len(args) > 1000 {
		return nil, fmt.Errorf("%d arguments, more than 1000", len(args))
	}
	var out []bmSource
	byCommit := map[string][]string{}
	var commits []string
	nGit := 0
	for _, a := range args {
		c, glob, ok := strings.Cut(a, ":")
		if gitDir != "" && ok {
			if c == "" || glob == "" {
				return nil, fmt.Errorf("%q: with --git-dir, name COMMIT:PATH-GLOB, e.g. 33a136d:'bbo_challenge/results/*_stcvx_min'", a)
			}
			if _, seen := byCommit[c]; !seen {
				commits = append(commits, c)
			}
			byCommit[c] = append(byCommit[c], glob)
			nGit++
			continue
		}
		abs, err := filepath.Abs(a)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			hint := ""
			if gitDir != "" {
				hint = " (with --git-dir, name COMMIT:PATH-GLOB, e.g. 33a136d:'bbo_challenge/results/*_stcvx_min')"
			}
			return nil, fmt.Errorf("%s: not a directory%s", a, hint)
		}
		fsys := os.DirFS(abs)
		dirs, err := ahsc.FindBayesmarkDBs(fsys, ".")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		for _, d := range dirs {
			display := filepath.ToSlash(filepath.Join(a, d))
			if display == "." {
				display = filepath.Base(abs)
			}
			out = append(out, bmSource{fsys: fsys, dir: d, display: display})
		}
	}
	if gitDir != "" && nGit == 0 {
		return nil, fmt.Errorf("--git-dir %s: no COMMIT:PATH-GLOB argument", gitDir)
	}
	for _, c := range commits {
		fsys, hash, roots, err := gitFS(ctx, gitDir, c, byCommit[c])
		if err != nil {
			return nil, err
		}
		for _, r := range roots {
			dirs, err := ahsc.FindBayesmarkDBs(fsys, r)
			if err != nil {
				return nil, fmt.Errorf("%s:%s: %w", hash, r, err)
			}
			for _, d := range dirs {
				out = append(out, bmSource{fsys: fsys, dir: d, display: d, commit: hash})
			}
		}
	}
	return out, nil
}

// writeBayesmark writes an ahsc result's Bayesmark cells in Bayesmark's layout under dir and
// says so on stderr.
func writeBayesmark(res *experiments.Result, dir string, stderr io.Writer) error {
	files, err := ahsc.WriteBayesmark(res, dir)
	if err != nil {
		return err
	}
	derived := ""
	if _, err := os.Stat(filepath.Join(dir, "derived", "eval.json")); err == nil {
		derived = " and derived/eval.json"
	}
	fmt.Fprintf(stderr, "wrote %d Bayesmark files (eval/, suggest_log/%s) under %s; score them with: hyperflat bayesmark score %s\n",
		len(files), derived, dir, dir)
	return nil
}

// outputTo runs write into --out (atomically) or stdout.
func outputTo(out string, stdout io.Writer, write func(io.Writer) error) error {
	if out == "" {
		return write(stdout)
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func runBayesmarkScore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("bayesmark score")
	gitDir := fs.String("git-dir", "", "a git directory (a clone or bare mirror): arguments COMMIT:PATH-GLOB are read from that commit, the others are directories")
	baseline := fs.String("baseline", ahsc.BaselineAuto, "opt and clip: auto (derived/baseline.json when present, as Bayesmark's analysis does), stored, or recompute (from the studies read)")
	raw := fs.Bool("raw", false, "read the studies from eval/*.json even where derived/eval.json exists")
	random := fs.StringSlice("random", ahsc.DefaultRandomNames, "the optimizers (names before _OPTREV_REV) whose calls set clip")
	resamples := fs.Int("resamples", ahsc.DefaultResamples, "bootstrap resamples of the studies")
	seed := fs.Uint64("seed", 1, "the bootstrap's seed")
	format := fs.String("format", "table", "output format: table, csv or json")
	out := fs.String("out", "", "write the output to this file instead of stdout")
	if code, ok := parseArgs(fs, "bayesmark score [--git-dir DIR] [--baseline auto|stored|recompute] [--raw] [--random NAMES] "+
		"[--resamples N] [--seed N] [--format table|csv|json] [--out FILE] DIR...", args, stdout, stderr); !ok {
		return code
	}
	if err := validFormat(*format); err != nil {
		fmt.Fprintf(stderr, "hyperflat bayesmark score: %v\n", err)
		return exitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hyperflat bayesmark score: %v\n", err)
		return exitFailure
	}
	srcs, err := bayesmarkSources(ctx, *gitDir, fs.Args())
	if err != nil {
		return fail(err)
	}
	opt := ahsc.BayesmarkScoreOptions{Baseline: *baseline, Random: *random, Resamples: *resamples, Seed: *seed}
	header := []string{"source", "problem", "dataset", "optimizer", "method", "studies", "calls_min", "calls_max",
		"mean", "ci_low", "ci_high", "median", "median_ci_low", "median_ci_high",
		"generalization_mean", "generalization_ci_low", "generalization_ci_high",
		"baseline", "baseline_diff", "resamples", "seed", "source_commit", "eval_path", "baseline_path", "cv_accuracy_median"}
	var rows [][]any
	var short [][]any
	var answer []string
	baselines := map[string]int{}
	maxDiff := 0.0
	for _, s := range srcs {
		db, err := ahsc.ReadBayesmarkDB(s.fsys, s.dir, *raw)
		if err != nil {
			return fail(err)
		}
		scores, err := ahsc.ScoreBayesmark(db, opt)
		if err != nil {
			return fail(err)
		}
		evalPath := db.EvalFiles[0]
		if len(db.EvalFiles) > 1 {
			evalPath = path.Join(path.Dir(evalPath), fmt.Sprintf("*.json (%d files)", len(db.EvalFiles)))
		}
		var parts []string
		sort.SliceStable(scores, func(i, j int) bool {
			return scores[i].Problem < scores[j].Problem || scores[i].Problem == scores[j].Problem && scores[i].Mean > scores[j].Mean
		})
		for _, r := range scores {
			calls := fmt.Sprint(r.CallsMin)
			if r.CallsMax != r.CallsMin {
				calls = fmt.Sprintf("%d–%d", r.CallsMin, r.CallsMax)
			}
			rows = append(rows, []any{s.display, r.Problem, r.Dataset, r.Optimizer, r.Method, r.Studies, r.CallsMin, r.CallsMax,
				r.Mean, r.MeanLow, r.MeanHigh, r.Median, r.MedianLow, r.MedianHigh, r.GenMean, r.GenMeanLow, r.GenMeanHigh,
				r.Baseline, r.BaselineDiff, *resamples, *seed, s.commit, evalPath, db.BaselineFile, r.CVAccuracyMedian})
			short = append(short, []any{label(s.display, r.Dataset), r.Method, r.Studies, calls, f2(r.Mean), ci(r.MeanLow, r.MeanHigh),
				f2(r.Median), ci(r.MedianLow, r.MedianHigh)})
			baselines[r.Baseline]++
			if r.Baseline == ahsc.BaselineStored && !(r.BaselineDiff <= maxDiff) {
				maxDiff = r.BaselineDiff
			}
			parts = append(parts, fmt.Sprintf("%s %s", r.Method, f2(r.Mean)))
		}
		answer = append(answer, fmt.Sprintf("%s: %s", label(s.display, scores[0].Dataset), strings.Join(parts, ", ")))
	}
	err = outputTo(*out, stdout, func(w io.Writer) error {
		if *format != "table" {
			return table(w, *format, header, rows)
		}
		fmt.Fprintf(w, "Bayesmark mean scores by optimizer (visible, 100 = the best call found by any, 0 = random search's median call): %s.\n\n",
			strings.Join(answer, "; "))
		if err := table(w, "table", []string{"problem", "method", "n", "calls", "mean", "95% CI", "median", "95% CI"}, short); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nn studies; intervals: percentile bootstrap over the studies, %d resamples, seed %d. ", *resamples, *seed)
		if n := baselines[ahsc.BaselineStored]; n > 0 {
			fmt.Fprintf(w, "opt and clip of %d rows from the stored derived/baseline.json (as Bayesmark's analysis), ", n)
			if math.IsNaN(maxDiff) {
				fmt.Fprint(w, "not checkable against these studies (no random search among them); ")
			} else {
				fmt.Fprintf(w, "within %.1e of clip − opt of the ones recomputed from these studies; ", maxDiff)
			}
		}
		if n := baselines["recomputed"]; n > 0 {
			fmt.Fprintf(w, "opt and clip of %d rows recomputed from the studies read (experiment_baseline.py); ", n)
		}
		fmt.Fprintln(w, "--format csv adds the generalization scores and names every source file.")
		return nil
	})
	if err != nil {
		return fail(err)
	}
	return exitOK
}

// label names a problem in the terminal table: the folder (the one above Bayesmark's run_*
// folders) when its name holds the dataset's, else the folder and the dataset.
func label(display, dataset string) string {
	base := path.Base(display)
	if strings.HasPrefix(base, "run_") && path.Dir(display) != "." {
		base = path.Base(path.Dir(display))
	}
	if strings.Contains(base, dataset) {
		return base
	}
	return base + ":" + dataset
}

func f2(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
}

func ci(lo, hi float64) string {
	if math.IsNaN(lo) {
		return "–"
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}

// quartiles are numpy.percentile's 25th, 50th and 75th (linear interpolation).
func quartiles(v []float64) [3]float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	q := func(p float64) float64 {
		if len(s) == 0 {
			return math.NaN()
		}
		h := p * float64(len(s)-1)
		i := int(math.Floor(h))
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (h-float64(i))*(s[i+1]-s[i])
	}
	return [3]float64{q(0.25), q(0.5), q(0.75)}
}

func runBayesmarkPicks(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("bayesmark picks")
	gitDir := fs.String("git-dir", "", "a git directory (a clone or bare mirror): arguments COMMIT:PATH-GLOB are read from that commit, the others are directories")
	param := fs.String("param", "batch_size", "the hyperparameter")
	reference := fs.String("reference", "", "add the Kolmogorov–Smirnov distance of each row's values to this optimizer's (its name before _OPTREV_REV), pooled over every folder")
	format := fs.String("format", "table", "output format: table, csv or json")
	out := fs.String("out", "", "write the output to this file instead of stdout")
	if code, ok := parseArgs(fs, "bayesmark picks [--git-dir DIR] [--param NAME] [--reference NAME] [--format table|csv|json] [--out FILE] DIR...", args, stdout, stderr); !ok {
		return code
	}
	if err := validFormat(*format); err != nil {
		fmt.Fprintf(stderr, "hyperflat bayesmark picks: %v\n", err)
		return exitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hyperflat bayesmark picks: %v\n", err)
		return exitFailure
	}
	srcs, err := bayesmarkSources(ctx, *gitDir, fs.Args())
	if err != nil {
		return fail(err)
	}
	pooled := map[string][]float64{}
	var methods []string
	type row struct {
		source, optimizer, commit, path string
		values                          []float64
	}
	var rows []row
	for _, s := range srcs {
		picks, files, err := ahsc.ReadBayesmarkSuggestions(s.fsys, s.dir, *param)
		if err != nil {
			return fail(err)
		}
		for _, p := range picks {
			rows = append(rows, row{s.display, p.Optimizer, s.commit, path.Join(path.Dir(files[0]), fmt.Sprintf("*.json (%d files)", len(files))), p.Values})
			m := strings.SplitN(p.Optimizer, "_", 2)[0]
			if _, ok := pooled[m]; !ok {
				methods = append(methods, m)
			}
			pooled[m] = append(pooled[m], p.Values...)
		}
	}
	if len(srcs) > 1 {
		for _, m := range methods {
			rows = append(rows, row{"(all)", m, "", "", pooled[m]})
		}
	}
	ref, hasRef := pooled[*reference]
	if *reference != "" && !hasRef {
		return fail(fmt.Errorf("--reference %s: no such optimizer among %s", *reference, strings.Join(methods, ", ")))
	}
	header := []string{"source", "optimizer", "picks", "q1", "median", "q3"}
	if hasRef {
		header = append(header, "ks_to_"+*reference)
	}
	header = append(header, "source_commit", "suggest_path")
	var full, short [][]any
	for _, r := range rows {
		q := quartiles(r.values)
		f := []any{r.source, r.optimizer, len(r.values), q[0], q[1], q[2]}
		sh := []any{label(r.source, ""), r.optimizer, len(r.values), q[0], q[1], q[2]}
		if hasRef {
			d := ksDistance(r.values, ref)
			f, sh = append(f, d), append(sh, fmt.Sprintf("%.3f", d))
		}
		full = append(full, append(f, r.commit, r.path))
		short = append(short, sh)
	}
	var answer []string
	for _, m := range methods {
		q := quartiles(pooled[m])
		answer = append(answer, fmt.Sprintf("%s %g/%g/%g", m, q[0], q[1], q[2]))
	}
	err = outputTo(*out, stdout, func(w io.Writer) error {
		if *format != "table" {
			return table(w, *format, header, full)
		}
		fmt.Fprintf(w, "Quartiles of %s over every suggestion (q1/median/q3, numpy's linear interpolation), pooled per optimizer: %s.\n\n", *param, strings.Join(answer, ", "))
		return table(w, "table", header[:len(short[0])], short)
	})
	if err != nil {
		return fail(err)
	}
	return exitOK
}

// ksDistance is the two-sample Kolmogorov–Smirnov statistic, sup |F_a − F_b|.
func ksDistance(a, b []float64) float64 {
	x, y := append([]float64(nil), a...), append([]float64(nil), b...)
	sort.Float64s(x)
	sort.Float64s(y)
	i, j, d := 0, 0, 0.0
	for i < len(x) && j < len(y) {
		v := math.Min(x[i], y[j])
		for i < len(x) && x[i] == v {
			i++
		}
		for j < len(y) && y[j] == v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(x))-float64(j)/float64(len(y))))
	}
	return d
}

// parseArgs parses flags followed by positional arguments (parse refuses those).
func parseArgs(fs *pflag.FlagSet, synopsis string, args []string, stdout, stderr io.Writer) (int, bool) {
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
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "hyperflat %s: name at least one folder\n\n", fs.Name())
		printUsage(stderr)
		return exitUsage, false
	}
	return exitOK, true
}
