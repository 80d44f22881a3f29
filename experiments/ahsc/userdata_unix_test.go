//go:build unix

package ahsc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
)

// Issue 52: --data on a FIFO hung for ever in a second open (made to hash the file), ignoring
// SIGTERM and SIGINT; from /dev/stdin the stored hash was that of an empty second read. A
// user's file must be a regular file, and its hash is that of the bytes parsed, read once.
func TestUserDataIsARegularFileHashedAsRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "d.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Data, cfg.Target = fifo, "y"
	done := make(chan error, 1)
	go func() {
		_, err := userProblem(context.Background(), experiments.Options{Seed: 1}, cfg)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not a regular file (") {
			t.Errorf("FIFO: got %v, want a refusal saying it is not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("--data on a FIFO did not return in 10 s")
	}

	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := range 60 {
		fmt.Fprintf(&b, "%d,%d,%d\n", i, i*i%7, i%2)
	}
	file := filepath.Join(dir, "d2.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Data = file
	p, err := userProblem(context.Background(), experiments.Options{Seed: 1}, cfg)
	sum := sha256.Sum256([]byte(b.String()))
	if err != nil || p.sha256 != hex.EncodeToString(sum[:]) {
		t.Errorf("regular file: %v, sha256 %q; want %x", err, p.sha256, sum)
	}
}
