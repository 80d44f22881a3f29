//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportRefusesNonRegularFiles: import reads a file more than once, so a pipe (which would
// block the second open forever) or a device is refused at once, naming it.
func TestImportRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "export.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		done := make(chan struct{})
		var code int
		var errs string
		go func() {
			code, _, errs = runCLI("import", "--store", filepath.Join(dir, "s.db"), path)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("import %s still running after 10s", path)
		}
		if code != 1 || !strings.Contains(errs, path+" is not a regular file") {
			t.Errorf("import %s: exit %d: %s", path, code, errs)
		}
	}
}
