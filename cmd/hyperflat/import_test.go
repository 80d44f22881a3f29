package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/store"
)

// readExportLines returns the lines of a gzip-compressed export.
func readExportLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// setHeader changes one field of an export's header line.
func setHeader(t *testing.T, line, key string, v any) string {
	t.Helper()
	var h map[string]json.RawMessage // the other fields' bytes as they were
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		t.Fatal(err)
	}
	var err error
	if h[key], err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestImportValidatesEverything: import refuses, writing nothing (not even the store's file),
// an export that is not what a run of this program stores — an unregistered experiment (a
// path-traversing one included), an identity that is not the hash of the options, options
// changed under the identity, cells that are not the plan of the options.
func TestImportValidatesEverything(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "s.db")
	submitSmallRuns(t, dsn, "3")
	if code, out, errs := runCLI("worker", "--store", dsn, "--quiet"); code != 0 {
		t.Fatalf("worker: exit %d: %s%s", code, out, errs)
	}
	exports := filepath.Join(dir, "exports")
	if code, _, errs := runCLI("export", "--store", dsn, "--dir", exports); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(exports, "*.jsonl.gz"))
	if len(files) != 1 {
		t.Fatalf("exports %v", files)
	}
	lines := readExportLines(t, files[0])
	header := lines[0]
	var h struct {
		Identity string
		Options  map[string]any
	}
	json.Unmarshal([]byte(header), &h)
	cfg := h.Options["config"].(map[string]any)

	changedOptions := func(k string, v any) map[string]any {
		o := map[string]any{}
		for kk, vv := range h.Options {
			o[kk] = vv
		}
		c := map[string]any{}
		for kk, vv := range cfg {
			c[kk] = vv
		}
		c[k] = v
		o["config"] = c
		return o
	}
	// 24 cells for a plan of 12: the export's own cells twice, renumbered.
	doubled := []string{setHeader(t, header, "cells", 24)}
	doubled = append(doubled, lines[1:]...)
	for i, l := range lines[1:] {
		doubled = append(doubled, setHeader(t, l, "index", 12+i))
	}
	// The same number of cells, one of them with another seed.
	reseeded := append([]string{}, lines...)
	reseeded[3] = setHeader(t, lines[3], "seed", "12345")

	good := filepath.Join(dir, "good.db")
	if code, out, errs := runCLI("import", "--store", good, files[0]); code != 0 || !strings.Contains(out, "created run") {
		t.Fatalf("import of the genuine export: exit %d: %s%s", code, out, errs)
	}
	for _, c := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"traversing experiment", append([]string{setHeader(t, header, "experiment", "../../../../elsewhere/EVIL")}, lines[1:]...), "header: experiment"},
		{"unregistered experiment", append([]string{setHeader(t, header, "experiment", "evil")}, lines[1:]...), `no experiment named "evil"`},
		{"identity not the hash", append([]string{setHeader(t, header, "identity", h.Identity[:len(h.Identity)-4]+"0000")}, lines[1:]...), "is not the hash of the export's options"},
		{"options changed under the identity", append([]string{setHeader(t, header, "options", changedOptions("repeats", 7))}, lines[1:]...), "is not the hash of the export's options"},
		{"cells not the plan", doubled, "the export has 24 cells, the plan of its options 12"},
		{"a reseeded cell", reseeded, "seed 12345"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fresh := filepath.Join(dir, "fresh", "s.db")
		code, _, errs := runCLI("import", "--store", fresh, files[0], path)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d: %s; want %q", c.name, code, errs, c.want)
		}
		if _, err := os.Stat(filepath.Dir(fresh)); !os.IsNotExist(err) {
			t.Errorf("%s: the refused import made %s (%v)", c.name, filepath.Dir(fresh), err)
		}
		code, _, errs = runCLI("import", "--store", good, path)
		if code != 1 {
			t.Errorf("%s into the store that has the run: exit %d: %s", c.name, code, errs)
		}
	}
	if code, list, _ := runCLI("runs", "--store", good, "--format", "csv"); code != 0 || strings.Count(list, "\n") != 2 {
		t.Errorf("after the refused imports the store holds:\n%s", list)
	}

}

// TestExportStaysInDir: export --dir keeps every file in the folder named, whatever the store
// says of a run — here one named to leave the folder, as an older build's import could store.
func TestExportStaysInDir(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "s.db")
	submitSmallRuns(t, dsn, "3")
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateRun(context.Background(), store.RunSpec{Identity: "../../x/../../EVIL-0123", Experiment: "../../../../elsewhere/EVIL",
		Cells: []store.CellSpec{{Index: 0, Key: "a"}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out := filepath.Join(dir, "deep", "er", "exports")
	code, stdout, errs := runCLI("export", "--store", dsn, "--dir", out)
	if code != 0 {
		t.Fatalf("export --dir: exit %d: %s", code, errs)
	}
	var written []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".jsonl.gz") && filepath.Dir(p) != out {
			written = append(written, p)
		}
		return nil
	})
	if len(written) > 0 || strings.Count(stdout, out+string(filepath.Separator)) != 2 {
		t.Errorf("export --dir %s wrote outside it: %v\n%s", out, written, stdout)
	}
}
