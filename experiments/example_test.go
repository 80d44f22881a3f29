package experiments_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/store"
)

// A run through a results store: it can be interrupted and resumed, and its report needs no
// recomputation.
func ExampleRunner() {
	dir, _ := os.MkdirTemp("", "hyperflat")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "runs.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()

	reg := all.Experiments()
	e, _ := reg.Lookup("freedman")
	cfg, err := e.Configure(experiments.Quick, map[string]string{"methods": "validation,bic"})
	if err != nil {
		panic(err)
	}
	opt := experiments.Options{Preset: experiments.Quick, Seed: 1, Config: cfg}
	r := &experiments.Runner{Store: st, Experiments: reg, Workers: 2}
	status, err := r.Start(ctx, e, opt, experiments.Mode{Resume: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("run %d: %d of %d cells done, computed %d\n", status.Run.ID, status.Run.Done, status.Run.Cells, status.Computed)

	// Resuming a finished run computes nothing; Report reads the stored tables.
	again, _ := r.Start(ctx, e, opt, experiments.Mode{Resume: true})
	res, _, _ := experiments.Report(ctx, st, reg, status.Run.ID, "")
	fmt.Println("computed on resume:", again.Computed)
	summary := res.Table("summary")
	for i := range summary.Rows {
		fmt.Printf("%s selects %d features\n", summary.String(i, "method"), summary.Int(i, "n_selected"))
	}
	// Output:
	// run 1: 2 of 2 cells done, computed 2
	// computed on resume: 0
	// validation selects 25 features
	// bic selects 11 features
}
