package experiments

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 16 item 8: writes into --out followed symlinks (ln -s ../victim D/summary.csv made a
// run overwrite the victim) and replaced files in place.
func TestArtifactsRefuseSymlinksAndReplaceAtomically(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(root, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &Result{Tables: []Table{{Name: "summary", Columns: []string{"a"}, Rows: [][]any{{1.5}}}}}
	panel := Panel{Title: "t", Series: []Series{{Label: "s", X: []float64{0, 1}, Y: []float64{1, 2}}}}
	saves := map[string]func(dir string) error{
		"summary.csv": func(dir string) error { r := *res; return r.SaveTables(dir) },
		"result.json": func(dir string) error { r := *res; return r.SaveTables(dir) },
		"fig.png":     func(dir string) error { _, err := SavePNG(dir, "fig.png", panel); return err },
		"scatter.png": func(dir string) error { _, err := SaveScatterPNG(dir, "scatter.png", panel); return err },
	}
	for name, save := range saves {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(out, name)
			if err := os.Symlink(victim, link); err != nil {
				t.Fatal(err)
			}
			err := save(out)
			if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("writing over a symlink: %v, want a refusal naming %s", err, link)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Fatalf("the symlink's target was overwritten: %q", b)
			}
			// A regular file is replaced, and no temporary file is left behind.
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(link, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := save(out); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(link); string(b) == "old" || len(b) == 0 {
				t.Errorf("%s not replaced: %q", name, b)
			}
			entries, _ := os.ReadDir(out)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp") {
					t.Errorf("temporary file %s left in --out", e.Name())
				}
			}
		})
	}
	// A failed write leaves the old file as it was and no temporary file.
	dir := t.TempDir()
	p := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	if err := WriteArtifact(p, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("a failed write changed the file to %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %d files", len(entries))
	}
}

// TestArtifactsStayInTheirFolder: an output named from what a store holds (a table, a figure
// whose name carries a dataset from an imported run's options) is written in the folder given
// or not at all: "../x" and "a/b" are refused before anything is written.
func TestArtifactsStayInTheirFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	for _, name := range []string{"../escaped", "sub/escaped", "/tmp/escaped", "../.."} {
		res := &Result{Tables: []Table{{Name: name, Columns: []string{"a"}, Rows: [][]any{{1.0}}}}}
		if err := res.SaveTables(dir); err == nil || !strings.Contains(err.Error(), "would leave") {
			t.Errorf("table %q: %v", name, err)
		}
		if _, err := SavePlots(dir, name+".png", 100, 100); err == nil || !strings.Contains(err.Error(), "would leave") {
			t.Errorf("figure %q: %v", name, err)
		}
	}
	var found []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = append(found, p)
		}
		return nil
	})
	if len(found) > 0 {
		t.Errorf("files written: %v", found)
	}
}
