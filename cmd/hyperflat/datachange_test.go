package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 52 (class 2): a --resume after the data file was replaced during a run mixed the
// results of both files with exit 0, because the stored hash came from a second read. The hash
// is now of the bytes parsed (datasets.TestLoadHashedIsOfTheBytesParsedWhenTheFileIsReplaced
// replaces the file within the read); this is the end-to-end guard: a resume that reads other
// bytes than the run parsed is refused, naming the file and both hashes.
func TestResumeAfterTheDataFileChangedIsRefused(t *testing.T) {
	t.Setenv(EnvStore, "")
	dir := t.TempDir()
	data := filepath.Join(dir, "d.csv")
	writeTextTable(t, data)
	args := []string{"run", "ahsc", "--data", data, "--target", "label", "--repeats", "1", "--methods", "ahsc",
		"--budget", "2", "--n1", "3", "--n2", "1", "--epochs", "2", "--format", "csv", "--quiet", "--out", filepath.Join(dir, "out")}
	if code, _, errs := runCLI(args...); code != exitOK {
		t.Fatalf("first run: exit %d: %s", code, errs)
	}
	f, err := os.OpenFile(data, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("0.5000,red,0.5000,yes\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, out, errs := runCLI(append(args, "--resume")...)
	if code == exitOK || !strings.Contains(errs, "the data file "+data+" changed since the run began: sha256 ") {
		t.Errorf("resume after the file changed: exit %d, stdout %q, stderr %q; want a refusal naming the changed file", code, out, errs)
	}
}
