package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/store"
)

// exportName is the file a run is exported to in a directory: its experiment and the start of
// its identity, the same for the run in every store (IDs differ between stores).
// Whatever a store holds (a run imported by an older build included), the name is one plain
// file name: characters other than letters, digits, '.', '_' and '-' become '_'.
func exportName(r store.Run) string {
	id := strings.TrimPrefix(r.Identity, r.Experiment+"-")
	if len(id) > 16 {
		id = id[:16]
	}
	return safeName(r.Experiment) + "-" + safeName(id) + ".jsonl.gz"
}

// safeName maps s to a file-name part that cannot leave a folder.
func safeName(s string) string {
	b := []byte(s)
	if len(b) > 64 {
		b = b[:64]
	}
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') || (i == 0 && c == '.') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// inside is dir/name, or an error if that path would not be a file directly in dir.
func inside(dir, name string) (string, error) {
	if !filepath.IsLocal(name) || filepath.Base(name) != name {
		return "", fmt.Errorf("export file name %q would leave %s", name, dir)
	}
	return filepath.Join(dir, name), nil
}

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("export")
	sf := addStoreFlags(fs, false)
	out := fs.String("out", "", "the --out directory of a run (its store is OUT/hyperflat.db)")
	runs := runIDs(fs, "export only these runs (`IDs` as 3,4 or the flag repeated; default: every run in the store)")
	dir := fs.String("dir", "", "write each run to DIR/EXPERIMENT-IDENTITY.jsonl.gz (gzip-compressed), replacing an older export of it; without it, the one run named by --run goes to stdout uncompressed")
	if code, ok := parse(fs, "export [--store DSN | --out DIR] [--run ID]... [--dir DIR]", args, stdout, stderr); !ok {
		return code
	}
	st, code := openExisting(ctx, "export", sf.dsn(*out), "table", stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hyperflat export: %v\n", err)
		return exitFailure
	}
	if *dir == "" {
		if len(*runs) != 1 {
			fmt.Fprintln(stderr, "hyperflat export: to stdout, name one run with --run ID (hyperflat runs lists them), or give --dir DIR")
			return exitUsage
		}
		if err := st.ExportRun(ctx, (*runs)[0], stdout); err != nil {
			return fail(err)
		}
		return exitOK
	}
	all, err := st.Runs(ctx)
	if err != nil {
		return fail(err)
	}
	byID := make(map[int64]store.Run, len(all))
	for _, r := range all {
		byID[r.ID] = r
	}
	chosen := all
	if len(*runs) > 0 {
		chosen = nil
		for _, id := range *runs {
			r, ok := byID[id]
			if !ok {
				return fail(fmt.Errorf("no run %d in %s (hyperflat runs lists them)", id, st.DSN()))
			}
			chosen = append(chosen, r)
		}
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fail(err)
	}
	for _, r := range chosen {
		path, err := inside(*dir, exportName(r))
		if err != nil {
			return fail(err)
		}
		if err := exportFile(ctx, st, r.ID, path); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "%s\trun %d\t%d/%d cells done\t%s\n", path, r.ID, r.Done, r.Cells, runOptions(r))
	}
	return exitOK
}

// exportFile writes the run to path gzip-compressed, through a temporary file renamed into
// place, so that an interrupted export leaves the previous one whole.
func exportFile(ctx context.Context, st *store.Store, id int64, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// A fixed header (no name, no time) so that an unchanged run exports to the same bytes.
	zw, err := gzip.NewWriterLevel(tmp, gzip.BestCompression)
	if err != nil {
		tmp.Close()
		return err
	}
	if err := st.ExportRun(ctx, id, zw); err != nil {
		tmp.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("import")
	sf := addStoreFlags(fs, false)
	out := fs.String("out", "", "the --out directory whose store (OUT/hyperflat.db) to import into")
	dataDir := fs.String("data-dir", "", "dataset directory, read to rebuild each export's plan and check its cells against it (default $"+datasets.EnvDataDir+", then the project's data folder)")
	noPlan := fs.Bool("no-plan-check", false, "do not rebuild the plans (for exports whose datasets are not at hand); the experiment, identity and options are still checked")
	const synopsis = "import [--store DSN | --out DIR] [--data-dir DIR] [--no-plan-check] FILE..."
	printUsage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: hyperflat %s\n\nFILE is an export (hyperflat export, plain or .gz). A run the store lacks is created; one it has (the same identity and options) gains the exported cells it has not finished. A resumed run (run --resume) continues it. Each export is checked whole before anything of it is written: a registered experiment, an identity that is the hash of its options, and cells that are exactly the plan of those options.\n\nFlags:\n%s", synopsis, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "hyperflat import: %v\n\n", err)
		printUsage(stderr)
		return exitUsage
	}
	if h, _ := fs.GetBool("help"); h {
		printUsage(stdout)
		return exitOK
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "hyperflat import: name the exports to import\n\n")
		printUsage(stderr)
		return exitUsage
	}
	dsn := sf.dsn(*out)
	if dsn == "" {
		fmt.Fprintf(stderr, "hyperflat import: name a store: --store DSN, --out DIR or $%s\n", EnvStore)
		return exitUsage
	}
	paths, err := exportsByCreation(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat import: %v\n", err)
		return exitFailure
	}
	checker := &experiments.ImportChecker{Experiments: all.Experiments(), DataDir: datasets.ResolveDir(*dataDir), SkipPlan: *noPlan}
	check := func(spec store.RunSpec) error { return checker.Check(ctx, spec) }
	// Every file is read and checked whole before the store is opened: an invalid one among
	// them writes nothing, not even a new store's file.
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(stderr, "hyperflat import: %v\n", err)
			return exitFailure
		}
		_, err = store.CheckExport(f, check)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "hyperflat import: %s: %v (nothing imported)\n", path, err)
			return exitFailure
		}
	}
	st, err := openStore(ctx, dsn)
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat import: %v\n", err)
		return exitFailure
	}
	defer st.Close()
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(stderr, "hyperflat import: %v\n", err)
			return exitFailure
		}
		s, err := st.ImportRunChecked(ctx, f, check)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "hyperflat import: %s: %v\n", path, strings.TrimPrefix(err.Error(), "store: import: "))
			return exitFailure
		}
		what := "merged into"
		if s.Created {
			what = "created"
		}
		resumable := ""
		if s.Resumable > 0 {
			resumable = fmt.Sprintf(", %d unfinished with recorded progress", s.Resumable)
		}
		if s.Retired > 0 {
			resumable += fmt.Sprintf(", %d retired (hyperflat retire)", s.Retired)
		}
		fmt.Fprintf(stdout, "%s\t%s run %d\t%d cells filled, %d already done here%s\t%d/%d cells done\n",
			path, what, s.Run.ID, s.Filled, s.Kept, resumable, s.Run.Done, s.Run.Cells)
		if s.Differ > 0 {
			fmt.Fprintf(stderr, "hyperflat import: %s: %d of the cells already done here differ from the export's in status or metrics (this store's are kept)\n", path, s.Differ)
		}
	}
	return exitOK
}

// exportsByCreation orders exports by when their runs were created, the order a shell glob
// (by file name, so by identity) loses: imported into an empty store the runs keep their
// relative order, so the latest run of a dataset and protocol — the one a report shows — stays
// the latest.
func exportsByCreation(paths []string) ([]string, error) {
	created := make(map[string]time.Time, len(paths))
	for _, path := range paths {
		// Import reads each file three times (its header here, then whole to check it, then to
		// import it): a pipe or a device would give other bytes each time, or block forever.
		if fi, err := os.Stat(path); err != nil {
			return nil, err
		} else if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file (%s): save the export to a file first", path, fi.Mode().Type())
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		info, err := store.ReadExportInfo(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		created[path] = info.Created
	}
	sorted := slices.Clone(paths)
	slices.SortStableFunc(sorted, func(a, b string) int { return created[a].Compare(created[b]) })
	return sorted, nil
}
