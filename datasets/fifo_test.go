//go:build unix

package datasets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mkfifo(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "fifo.csv")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

func readTableFile(ctx context.Context, p string) error {
	_, err := LoadTable(ctx, p, TableOptions{Header: true, Text: true})
	return err
}

func within(t *testing.T, d time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return in %v", what, d)
		return nil
	}
}

// Issue 52: reading the data from a FIFO hung for ever in the open, ignoring SIGTERM and
// SIGINT (whose handler cancels the context). A FIFO without a writer now fails at once; one
// whose writer stalls stops when the context is cancelled; one that is written is read once.
func TestFIFOsAreReadOnceAndCancellable(t *testing.T) {
	p := mkfifo(t)
	err := within(t, 10*time.Second, "a FIFO without a writer", func() error { return readTableFile(context.Background(), p) })
	if err == nil || !strings.Contains(err.Error(), "not a regular file and gave no data") {
		t.Errorf("no writer: got %v", err)
	}

	// A writer that sends a header and then stalls.
	p = mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	stalled := make(chan struct{})
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		io.WriteString(w, "a,y\n1,0\n")
		<-stalled
	}()
	time.Sleep(200 * time.Millisecond) // the writer blocks in its open, and counts as one
	time.AfterFunc(300*time.Millisecond, cancel)
	err = within(t, 10*time.Second, "a stalled FIFO after cancel", func() error { return readTableFile(ctx, p) })
	close(stalled)
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("stalled writer: got %v, want the context's cancellation", err)
	}

	// A FIFO that is written is read once, and hashed as read.
	p = mkfifo(t)
	const content = "a,y\n1,0\n2,1\n3,0\n"
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		io.WriteString(w, content)
		w.Close()
	}()
	time.Sleep(200 * time.Millisecond)
	var d *Dataset
	var dg Digest
	for range 50 {
		if d, dg, err = LoadHashed(context.Background(), p, func(r io.Reader, n string) (*Dataset, error) {
			return ReadTable(r, n, TableOptions{Header: true, Text: true})
		}); err == nil || !strings.Contains(err.Error(), "gave no data") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	sum := sha256.Sum256([]byte(content))
	if err != nil || d.N != 3 || dg.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("written FIFO: %v, %+v", err, dg)
	}
}
