//go:build unix

package search

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 52 (class 2): a FIFO given as --space hung in the open, beyond the reach of signals;
// it is refused before it is opened.
func TestSpaceFileIsARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "space.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadSpaceFile(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("FIFO: %v; want a refusal saying it is not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a FIFO --space did not return in 10 s")
	}
}
