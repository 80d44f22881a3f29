package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// lockedBuffer is a bytes.Buffer that the server goroutine writes and the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServe: serve refuses an address off loopback without --token and a store that does not
// exist; on loopback it serves the store read-only and stops cleanly when cancelled.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--out", dir, "--addr", "0.0.0.0:0"}, exitUsage, "without --token"},
		{[]string{"serve", "--out", dir, "--addr", ":0"}, exitUsage, "without --token"},
		{[]string{"serve", "--out", dir, "--addr", "example.com:80"}, exitUsage, "without --token"},
		{[]string{"serve"}, exitUsage, "name a store"},
		{[]string{"serve", "--out", dir}, exitFailure, "no store at"},
	} {
		code, _, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:8080": true, "localhost:1": true,
		"0.0.0.0:80": false, ":8080": false, "10.0.0.1:80": false, "myhost:80": false, "nonsense": false} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}

	path := filepath.Join(dir, "hyperflat.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateRun(context.Background(), store.RunSpec{Identity: "x", Experiment: "freedman", Cells: []store.CellSpec{{Index: 0, Key: "only"}}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int)
	go func() {
		done <- runServe(ctx, []string{"--out", dir, "--addr", "127.0.0.1:0", "--token", "tok"}, &stdout, &stderr)
	}()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		base = url.FindString(stdout.String())
	}
	if base == "" {
		cancel()
		t.Fatalf("serve printed no URL: stdout %q, stderr %q (exit %d)", stdout.String(), stderr.String(), <-done)
	}
	if !strings.Contains(stdout.String(), "?token=tok") {
		t.Errorf("the printed URL does not carry the token: %q", stdout.String())
	}
	for _, c := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"tok", http.StatusOK}} {
		req, _ := http.NewRequest("GET", base+"runs/1", nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || (c.want == http.StatusOK && !strings.Contains(string(body), "freedman")) {
			t.Errorf("GET /runs/1 with token %q: %s", c.token, resp.Status)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("serve exited %d after cancel: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after its context was cancelled")
	}
}
