package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/store"
)

// writeTable1 is `report --markdown DIR`: the published AHSC Table 1 (DIR/table1.md, and its
// cells as DIR/table1.csv) from every stored ahsc run with a result, or from run alone.
func writeTable1(ctx context.Context, st *store.Store, run int64, dataDir, dir, command string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hyperflat report: %v\n", err)
		return exitFailure
	}
	infos, err := st.Runs(ctx)
	if err != nil {
		return fail(err)
	}
	var runs []ahsc.StoredRun
	for _, info := range infos {
		if info.Experiment != "ahsc" || (run != 0 && info.ID != run) || (run == 0 && info.Done < info.Cells) {
			continue
		}
		res, _, err := experiments.Report(ctx, st, all.Experiments(), info.ID, dataDir)
		if err != nil {
			return fail(fmt.Errorf("run %d: %w", info.ID, err))
		}
		sr := ahsc.StoredRun{ID: info.ID, Result: res, CellSeconds: info.CellSeconds}
		if !info.Started.IsZero() && info.Finished.After(info.Started) {
			sr.Wall = info.Finished.Sub(info.Started)
		}
		runs = append(runs, sr)
	}
	if len(runs) == 0 {
		return fail(fmt.Errorf("the store holds no finished ahsc run%s", map[bool]string{true: fmt.Sprintf(" %d", run)}[run != 0]))
	}
	md, err := ahsc.Table1Markdown(command, runs...)
	if err != nil {
		return fail(err)
	}
	cells, err := ahsc.Table1Cells(runs...)
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	mdPath, csvPath := filepath.Join(dir, "table1.md"), filepath.Join(dir, "table1.csv")
	if err := experiments.WriteArtifact(mdPath, func(w io.Writer) error { _, err := w.Write(md); return err }); err != nil {
		return fail(err)
	}
	if err := experiments.WriteArtifact(csvPath, func(w io.Writer) error { return ahsc.WriteTable1CSV(w, cells) }); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "wrote %s and %s from %d runs\n", mdPath, csvPath, len(runs))
	return exitOK
}
