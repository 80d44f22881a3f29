//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 52 (classes 2 and 3): report --markdown read the page whose block it rewrites whole
// and by name, so a FIFO in its place hung the command (in the open, beyond the reach of
// signals) and a huge file was read into memory. Both are refused.
func TestPageToRewriteIsABoundedRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ahsc-protocol.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := replaceGeneratedBlock(fifo, "v"); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("FIFO: %v; want a refusal saying it is not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a FIFO page did not return in 10 s")
	}
	big := filepath.Join(dir, "big.md")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxPageBytes + 1); err != nil { // sparse: no disk written
		t.Fatal(err)
	}
	f.Close()
	if _, err := replaceGeneratedBlock(big, "v"); err == nil || !strings.Contains(err.Error(), "not a page to rewrite") {
		t.Errorf("a page over the bound: %v", err)
	}
}
