package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/internal/textable"
	"github.com/spf13/pflag"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

const dataSynopsis = "data [--data-dir DIR] [--format table|csv|json]  |  data fetch NAME...|all [--data-dir DIR] [--quiet]"

// runData lists the registry's datasets with what the data directory holds of them, or, as
// "data fetch", downloads them.
func runData(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "fetch" {
		return runFetch(ctx, args[1:], stdout, stderr)
	}
	fs := flags("data")
	dataDir := fs.String("data-dir", "", "dataset directory (default $"+datasets.EnvDataDir+", then the project's data folder)")
	format := fs.String("format", "table", "output format: table, csv or json")
	if code, ok := parse(fs, dataSynopsis, args, stdout, stderr); !ok {
		return code
	}
	if err := validFormat(*format); err != nil {
		fmt.Fprintf(stderr, "hyperflat data: %v\n", err)
		return exitUsage
	}
	dir := datasets.ResolveDir(*dataDir)
	var rows [][]any
	for _, name := range datasets.Names() {
		in, _ := datasets.Lookup(name)
		st, err := datasets.Check(ctx, name, dir)
		if err != nil {
			fmt.Fprintf(stderr, "hyperflat data: %v\n", err)
			return exitFailure
		}
		var size int64
		for _, f := range in.Files {
			size += f.Size
		}
		source := in.Source
		if *format == "table" {
			source = shortSource(source)
		}
		rows = append(rows, []any{name, datasetState(name, st), datasetPath(in, dir, *format == "table"), byteSize(size), source, in.Licence})
	}
	if *format == "table" {
		fmt.Fprintf(stdout, "data directory: %s (--data-dir, $%s)\n", dir, datasets.EnvDataDir)
	}
	if err := table(stdout, *format, []string{"Dataset", "Status", "Path", "Size", "Source", "Licence"}, rows); err != nil {
		fmt.Fprintf(stderr, "hyperflat data: %v\n", err)
		return exitFailure
	}
	if *format == "table" {
		fmt.Fprintln(stdout, "hyperflat data fetch NAME (or all) downloads what is missing, checking sizes and sha256s;")
		fmt.Fprintln(stdout, "hyperflat data --format csv (or json) lists the full sources and paths")
	}
	return exitOK
}

// datasetState sums up a dataset's files: present, missing (with the embedded copy that is
// used instead, if any), checksum mismatch, or how many of its files are missing.
func datasetState(name string, st []datasets.FileStatus) string {
	missing := 0
	for _, s := range st {
		switch s.State {
		case datasets.Mismatch:
			return datasets.Mismatch.String() + ": " + path.Base(s.File.Path)
		case datasets.Missing:
			missing++
		}
	}
	switch {
	case missing == 0:
		return datasets.Present.String()
	case missing < len(st):
		return fmt.Sprintf("%s %d of %d files", datasets.Missing, missing, len(st))
	case slices.Contains(datasets.EmbeddedNames(), name):
		return datasets.Missing.String() + " (embedded copy used)"
	}
	return datasets.Missing.String()
}

// datasetPath is where a dataset's file is expected, or the folder of its files; relative to
// the data directory (named above the table) when short is set.
func datasetPath(in datasets.Info, dir string, short bool) string {
	p := in.Files[0].Path
	if len(in.Files) > 1 {
		p = path.Dir(p) + "/"
		for _, f := range in.Files[1:] {
			for !strings.HasPrefix(f.Path, p) {
				p = path.Dir(strings.TrimSuffix(p, "/")) + "/"
			}
		}
	}
	if short {
		return p
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

// shortSource is the host a source URL names, or the start of a source in words: the table
// has room for where, not for the whole address.
func shortSource(s string) string {
	if u, err := url.Parse(strings.Fields(s + " ")[0]); err == nil && u.Host != "" {
		return u.Host
	}
	return textable.Abbreviate(s, 24)
}

// byteSize is a file size: "9.9 MB" to read, a number of bytes in JSON.
type byteSize int64

func (b byteSize) String() string {
	x, units := float64(b), []string{"B", "kB", "MB", "GB"}
	i := 0
	for x >= 1000 && i < len(units)-1 {
		x /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", int64(b))
	}
	return fmt.Sprintf("%.1f %s", x, units[i])
}

func runFetch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("data fetch")
	dataDir := fs.String("data-dir", "", "dataset directory to download into (default $"+datasets.EnvDataDir+", then the project's data folder)")
	quiet := fs.Bool("quiet", false, "no progress bars on stderr")
	synopsis := "data fetch NAME...|all [--data-dir DIR] [--quiet]"
	names, code, ok := parseNames(fs, synopsis, args, stdout, stderr)
	if !ok {
		return code
	}
	dir := datasets.ResolveDir(*dataDir)
	var opt datasets.FetchOptions
	var dl *downloads
	if f, ok := stderr.(*os.File); ok && !*quiet && isTerminal(f) {
		dl = &downloads{p: mpb.New(mpb.WithOutput(stderr), mpb.WithWidth(40)), bars: map[string]*mpb.Bar{}}
		opt.Progress = dl.progress
	}
	warn := stderr // above the bars, while they are drawn
	if dl != nil {
		warn = dl.p
	}
	var failed []string
	for _, name := range names {
		paths, err := datasets.Fetch(ctx, name, dir, opt)
		for _, p := range paths {
			fmt.Fprintf(stdout, "fetched %s\n", p)
		}
		if err != nil {
			if errors.Is(err, context.Canceled) {
				if dl != nil {
					dl.stop()
				}
				fmt.Fprintln(stderr, "hyperflat data fetch: interrupted; run it again to resume the partial download")
				return exitFailure
			}
			fmt.Fprintf(warn, "hyperflat data fetch: %v\n", err)
			failed = append(failed, name)
			continue
		}
		if len(paths) == 0 {
			fmt.Fprintf(stdout, "%s: present in %s\n", name, dir)
		}
	}
	if dl != nil {
		dl.stop()
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "hyperflat data fetch: not fetched: %s\n", strings.Join(failed, ", "))
		return exitFailure
	}
	return exitOK
}

// parseNames parses flags and the dataset names after them ("all": every registry dataset).
func parseNames(fs *pflag.FlagSet, synopsis string, args []string, stdout, stderr io.Writer) ([]string, int, bool) {
	printUsage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: hyperflat %s\n\nDatasets: %s\n\nFlags:\n%s", synopsis, strings.Join(datasets.Names(), ", "), fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "hyperflat %s: %v\n\n", fs.Name(), err)
		printUsage(stderr)
		return nil, exitUsage, false
	}
	if h, _ := fs.GetBool("help"); h {
		printUsage(stdout)
		return nil, exitOK, false
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "hyperflat %s: name a dataset, or all\n\n", fs.Name())
		printUsage(stderr)
		return nil, exitUsage, false
	}
	var names []string
	for _, a := range fs.Args() {
		if a == "all" {
			return datasets.Names(), exitOK, true
		}
		if _, ok := datasets.Lookup(a); !ok {
			fmt.Fprintf(stderr, "hyperflat %s: unknown dataset %q (known: %s)\n", fs.Name(), a, strings.Join(datasets.Names(), ", "))
			return nil, exitUsage, false
		}
		if !slices.Contains(names, a) {
			names = append(names, a)
		}
	}
	return names, exitOK, true
}

// downloads draws a bar per file being downloaded.
type downloads struct {
	p    *mpb.Progress
	mu   sync.Mutex
	bars map[string]*mpb.Bar
}

func (d *downloads) progress(f datasets.File, done, total int64) {
	d.mu.Lock()
	b, ok := d.bars[f.Path]
	if !ok {
		b = d.p.AddBar(total,
			mpb.PrependDecorators(decor.Name(path.Base(f.Path)+" ", decor.WCSyncSpaceR), decor.CountersKibiByte("% .1f / % .1f", decor.WCSyncWidth)),
			mpb.AppendDecorators(decor.Percentage(decor.WC{W: 5}), decor.Name(" "), decor.AverageSpeed(decor.SizeB1024(0), "% .1f", decor.WCSyncWidth)))
		d.bars[f.Path] = b
	}
	d.mu.Unlock()
	b.SetCurrent(done)
}

// stop ends the bars, dropping those of downloads that did not finish (mpb's Wait waits for
// every bar to complete).
func (d *downloads) stop() {
	d.mu.Lock()
	for _, b := range d.bars {
		if !b.Completed() {
			b.Abort(true)
		}
	}
	d.mu.Unlock()
	d.p.Wait()
}
