package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/experiments/premise"
	"github.com/hyperflat/hyperflat/experiments/weightdecay"
	"github.com/hyperflat/hyperflat/store"
)

// writeTable1 is `report --markdown DIR`: the published tables of the stored runs, or of run
// alone. The AHSC Table 1 (DIR/table1.md, its cells as DIR/table1.csv, the authors' parser
// statistic per group of repeats as DIR/table1_parser.csv) comes from every finished ahsc
// run; the PAC-Bayes Table C.1 (DIR/tablec1.md, .csv, _history.csv, _others.csv and its
// figures) from every weightdecay run, finished or not (a run in progress gives its complete
// replicates). A store without either fails.
func writeTable1(ctx context.Context, st *store.Store, run int64, dataDir, dir, command string, stdout, stderr io.Writer) int {
	infos, err := st.Runs(ctx)
	if err != nil {
		return reportFail(stderr, err)
	}
	var ahscRuns, wdRuns []store.Run
	var inProgress []ahsc.RunProgress
	for _, info := range infos {
		if run != 0 && info.ID != run {
			continue
		}
		switch info.Experiment {
		case "ahsc":
			switch {
			case run != 0 || info.Done == info.Cells:
				ahscRuns = append(ahscRuns, info)
			case info.Retired > 0: // taken out of the work (hyperflat retire): not being computed
			default:
				p, err := runProgress(ctx, st, info)
				if err != nil {
					return reportFail(stderr, err)
				}
				inProgress = append(inProgress, p)
			}
		case "weightdecay":
			wdRuns = append(wdRuns, info)
		}
	}
	premiseDoc, err := premise.WriteMarkdown(ctx, st, run, dataDir, dir, command) // DIR/premise.md, from every premise run
	if err != nil {
		return reportFail(stderr, err)
	}
	if premiseDoc != "" {
		fmt.Fprintf(stdout, "wrote %s\n", premiseDoc)
	}
	if len(ahscRuns) == 0 && len(wdRuns) == 0 && premiseDoc == "" {
		return reportFail(stderr, fmt.Errorf("the store holds no finished ahsc run, no weightdecay run and no premise run%s", map[bool]string{true: fmt.Sprintf(" %d", run)}[run != 0]))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return reportFail(stderr, err)
	}
	if len(ahscRuns) > 0 {
		if code := writeAHSCTable1(ctx, st, ahscRuns, inProgress, dataDir, dir, command, stdout, stderr); code != exitOK {
			return code
		}
	}
	if len(wdRuns) > 0 {
		return writeTableC1(ctx, st, wdRuns, dir, command, stdout, stderr)
	}
	return exitOK
}

// exportStore is the store the published pages' command imports the exports into.
const exportStore = "grid.db"

// markdownCommand is the command a page written by report --markdown DIR names as its
// source. Where DIR holds the exported runs (DIR/runs/*.jsonl.gz, as docs/reproduction does),
// it is the pair that regenerates the page from a clone, the exports imported into a fresh
// store and the report run on it, so that the page does not name a store only its author
// has; otherwise it is the command as given.
func markdownCommand(args []string, dir string) string {
	literal := "hyperflat " + strings.Join(append([]string{"report"}, args...), " ")
	exports := filepath.Join(dir, "runs", "*.jsonl.gz")
	if m, err := filepath.Glob(exports); err != nil || len(m) == 0 {
		return literal
	}
	rest := []string{"report", "--store", exportStore}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--store" || a == "--out":
			i++ // and its value
		case strings.HasPrefix(a, "--store=") || strings.HasPrefix(a, "--out="):
		default:
			rest = append(rest, a)
		}
	}
	return fmt.Sprintf("hyperflat import --store %s %s && hyperflat %s", exportStore, exports, strings.Join(rest, " "))
}

func reportFail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "hyperflat report: %v\n", err)
	return exitFailure
}

// writeAHSCTable1 writes DIR/table1.md and DIR/table1.csv from the ahsc runs infos, listing
// the unfinished ones, inProgress, as being computed.
func writeAHSCTable1(ctx context.Context, st *store.Store, infos []store.Run, inProgress []ahsc.RunProgress, dataDir, dir, command string, stdout, stderr io.Writer) int {
	fail := func(err error) int { return reportFail(stderr, err) }
	var runs []ahsc.StoredRun
	for _, info := range infos {
		res, _, err := experiments.Report(ctx, st, all.Experiments(), info.ID, dataDir)
		if err != nil {
			return fail(fmt.Errorf("run %d: %w", info.ID, err))
		}
		times, err := cellTimes(ctx, st, info.ID)
		if err != nil {
			return fail(err)
		}
		sr := ahsc.StoredRun{ID: info.ID, Result: res, CellSeconds: ahsc.CellSeconds(times), CellBuilds: map[string]string{}}
		for _, c := range times {
			if c.Done {
				sr.CellBuilds[c.Key] = c.Build
			}
		}
		if !info.Started.IsZero() && info.Finished.After(info.Started) {
			sr.Wall = info.Finished.Sub(info.Started)
		}
		if sr.Builds, err = st.CodeVersions(ctx, info.ID); err != nil {
			return fail(err)
		}
		if sr.Spans, err = st.CellSpans(ctx, info.ID); err != nil {
			return fail(err)
		}
		runs = append(runs, sr)
	}
	md, err := ahsc.Table1Markdown(command, inProgress, runs...)
	if err != nil {
		return fail(err)
	}
	cells, err := ahsc.Table1Cells(runs...)
	if err != nil {
		return fail(err)
	}
	mdPath, csvPath := filepath.Join(dir, "table1.md"), filepath.Join(dir, "table1.csv")
	if err := experiments.WriteArtifact(mdPath, func(w io.Writer) error { _, err := w.Write(md); return err }); err != nil {
		return fail(err)
	}
	if err := experiments.WriteArtifact(csvPath, func(w io.Writer) error { return ahsc.WriteTable1CSV(w, cells) }); err != nil {
		return fail(err)
	}
	wrote := []string{mdPath, csvPath}
	equal, pooled, err := ahsc.Table1BudgetCells(runs...)
	if err != nil {
		return fail(err)
	}
	for _, t := range []experiments.Table{equal, pooled} {
		if len(t.Rows) == 0 {
			continue
		}
		p := filepath.Join(dir, t.Name+".csv")
		if err := experiments.WriteArtifact(p, func(w io.Writer) error { return ahsc.WriteTable1CSV(w, t) }); err != nil {
			return fail(err)
		}
		wrote = append(wrote, p)
	}
	if parser := ahsc.AuthorsParserCells(runs...); len(parser.Rows) > 0 { // table1.md's parser table gives these groups' medians
		p := filepath.Join(dir, "table1_parser.csv")
		if err := experiments.WriteArtifact(p, parser.WriteCSV); err != nil {
			return fail(err)
		}
		wrote = append(wrote, p)
	}
	figs, err := ahsc.WriteTable1Figures(dir, runs...) // Figure 2, which table1.md links
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "wrote %s and %d figures from %d runs\n", strings.Join(wrote, ", "), len(figs), len(runs))
	return exitOK
}

// writeTableC1 writes DIR/tablec1.md, tablec1.csv, tablec1_history.csv and the figures of
// Table C.1 from the weightdecay runs infos, reading their done cells (nothing is recomputed,
// and no dataset is read).
func writeTableC1(ctx context.Context, st *store.Store, infos []store.Run, dir, command string, stdout, stderr io.Writer) int {
	fail := func(err error) int { return reportFail(stderr, err) }
	var runs []weightdecay.StoredRun
	for _, info := range infos {
		cells, err := st.Cells(ctx, info.ID)
		if err != nil {
			return fail(fmt.Errorf("run %d: %w", info.ID, err))
		}
		sr := weightdecay.StoredRun{ID: info.ID, Options: info.Options, Cells: info.Cells, CellSeconds: info.CellSeconds}
		for _, c := range cells {
			if c.Status == store.Done {
				sr.Outputs = append(sr.Outputs, c.Outcome.Output)
			}
		}
		if !info.Started.IsZero() && info.Finished.After(info.Started) {
			sr.Wall = info.Finished.Sub(info.Started)
		}
		runs = append(runs, sr)
	}
	t, err := weightdecay.ReadTableC1(runs...)
	if err != nil {
		return fail(err)
	}
	mdPath := filepath.Join(dir, "tablec1.md")
	cells, hist, others := t.Cells(), t.History(), t.Others()
	for _, f := range []struct {
		path  string
		write func(io.Writer) error
	}{
		{mdPath, func(w io.Writer) error { _, err := w.Write(t.Markdown(command)); return err }},
		{filepath.Join(dir, "tablec1.csv"), cells.WriteCSV},
		{filepath.Join(dir, "tablec1_history.csv"), hist.WriteCSV},
		{filepath.Join(dir, "tablec1_others.csv"), others.WriteCSV},
	} {
		if err := experiments.WriteArtifact(f.path, f.write); err != nil {
			return fail(err)
		}
	}
	figs, err := t.Figures(dir)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "wrote %s, tablec1.csv, tablec1_history.csv, tablec1_others.csv and %d figures from %d weightdecay runs (%d of %d pairs measured)\n",
		mdPath, len(figs), len(runs), t.Measured(), len(weightdecay.Pairs))
	return exitOK
}

// runProgress describes an unfinished ahsc run from its cells.
func runProgress(ctx context.Context, st *store.Store, info store.Run) (ahsc.RunProgress, error) {
	times, err := cellTimes(ctx, st, info.ID)
	if err != nil {
		return ahsc.RunProgress{}, err
	}
	return ahsc.ParseRunProgress(info.ID, info.Options, times)
}

// cellTimes is where each cell of the ahsc run id stands.
func cellTimes(ctx context.Context, st *store.Store, id int64) ([]ahsc.CellTime, error) {
	cells, err := st.Cells(ctx, id)
	if err != nil {
		return nil, err
	}
	saved, err := st.SavedProgress(ctx, id)
	if err != nil {
		return nil, err
	}
	times := make([]ahsc.CellTime, len(cells))
	for i, c := range cells {
		times[i] = ahsc.CellTime{Key: c.Key, Done: c.Status == store.Done, Seconds: c.Outcome.Seconds, Attempts: c.Attempts,
			LastAttempt: c.Finished.Sub(c.Started).Seconds(), Build: c.Outcome.CodeVersion, Finished: c.Finished,
			Output: c.Outcome.Output, Record: saved[c.Index]}
	}
	return times, nil
}
