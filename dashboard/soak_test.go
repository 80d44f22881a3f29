package dashboard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// openFDs counts this process's open file descriptors (-1 where /proc is not there).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestServeSoak floods a dashboard over a 10,080-cell store with 300 loopback clients for
// three seconds — 250 opening event streams (and reopening them when refused), 50 loading
// pages — then lets them all go. The streams open at once stay within MaxStreams, the extra
// clients are told why, pages answer promptly throughout, and afterwards the process is back
// to the goroutines and file descriptors it started with. (Before: 500 streams held ~1,000
// SQLite handles and 2.3 GB, a page took 6.3 s, and ~500 handles stayed.)
func TestServeSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of 300 clients for a few seconds")
	}
	const n, streamers, pagers, flood = 10080, 250, 50, 3 * time.Second
	path, id := largeStore(t, n)
	ts, _ := serve(t, path, Config{})
	tr := &http.Transport{MaxIdleConnsPerHost: streamers + pagers}
	client := &http.Client{Transport: tr}
	get := func(ctx context.Context, url string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return nil, err
		}
		return client.Do(req)
	}
	// The starting level: the server has answered a page and a stream once.
	for _, u := range []string{"/", fmt.Sprintf("/runs/%d", id)} {
		if resp, err := get(context.Background(), ts.URL+u); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	tr.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	runtime.GC()
	baseG, baseFD := runtime.NumGoroutine(), openFDs()
	var baseMem runtime.MemStats
	runtime.ReadMemStats(&baseMem)

	ctx, cancel := context.WithTimeout(context.Background(), flood)
	defer cancel()
	var (
		wg                          sync.WaitGroup
		open, maxOpen, refused, got atomic.Int64
		refusal                     atomic.Value
		mu                          sync.Mutex
		slowest                     time.Duration
		pages                       int
		pageErrs                    []string
	)
	for i := range streamers {
		url := ts.URL + "/events"
		if i%2 == 1 {
			url += fmt.Sprintf("?run=%d", id)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				resp, err := get(ctx, url)
				if err != nil {
					continue
				}
				if resp.StatusCode == http.StatusServiceUnavailable {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					refused.Add(1)
					refusal.Store(string(b))
					select {
					case <-ctx.Done():
					case <-time.After(500 * time.Millisecond):
					}
					continue
				}
				now := open.Add(1)
				for m := maxOpen.Load(); now > m && !maxOpen.CompareAndSwap(m, now); m = maxOpen.Load() {
				}
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "event: run") {
						got.Add(1)
					}
				}
				open.Add(-1)
				resp.Body.Close()
			}
		}()
	}
	for i := range pagers {
		url := ts.URL + "/"
		if i%2 == 1 {
			url = fmt.Sprintf("%s/runs/%d", ts.URL, id)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				resp, err := get(ctx, url)
				if err != nil {
					// The flood ended mid-request: a request that waited is slow all the same.
					mu.Lock()
					slowest = max(slowest, time.Since(start))
					mu.Unlock()
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took := time.Since(start)
				mu.Lock()
				if err != nil && ctx.Err() != nil {
					// The flood ended while the body was read: slow, not failed.
					slowest = max(slowest, took)
				} else if resp.StatusCode != 200 || err != nil {
					pageErrs = append(pageErrs, fmt.Sprintf("%s: %s %v", url, resp.Status, err))
				} else if ctx.Err() == nil {
					pages++
					slowest = max(slowest, took)
				}
				mu.Unlock()
			}
		}()
	}
	var peak runtime.MemStats
	go func() {
		for ctx.Err() == nil {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			mu.Lock()
			if m.HeapInuse > peak.HeapInuse {
				peak = m
			}
			mu.Unlock()
			time.Sleep(200 * time.Millisecond)
		}
	}()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d pages, slowest %v; streams open at most %d, %d refusals, %d run events; heap in use %d MB at the peak (%d MB before)",
		pages, slowest, maxOpen.Load(), refused.Load(), got.Load(), peak.HeapInuse>>20, baseMem.HeapInuse>>20)
	if m := maxOpen.Load(); m > DefaultMaxStreams {
		t.Errorf("%d event streams open at once; the bound is %d", m, DefaultMaxStreams)
	}
	if refused.Load() == 0 {
		t.Errorf("no client past the %d streams was refused", DefaultMaxStreams)
	} else if r, _ := refusal.Load().(string); !strings.Contains(r, "live views are open") {
		t.Errorf("a refused client was told %q", r)
	}
	if got.Load() == 0 {
		t.Error("no run event reached any stream")
	}
	if len(pageErrs) > 0 {
		t.Errorf("%d page requests failed, first: %s", len(pageErrs), pageErrs[0])
	}
	// Generous bounds, for a loaded machine: before, 3 pages got through in the flood's 3 s;
	// then, with every page reading the store, some waited for a connection the whole flood
	// (database/sql serves its waiters in no order). A page costs ~10 ms alone.
	if pages < 10 || slowest > 2500*time.Millisecond {
		t.Errorf("%d pages during the flood, the slowest in %v; want 10 or more, each under 2.5s", pages, slowest)
	}
	if peak.HeapInuse > baseMem.HeapInuse+512<<20 {
		t.Errorf("heap in use grew from %d MB to %d MB during the flood", baseMem.HeapInuse>>20, peak.HeapInuse>>20)
	}

	// Once the clients have gone, what they held is let go: their goroutines and descriptors
	// (sockets, and the store connections their reads opened beyond the idle few).
	tr.CloseIdleConnections()
	const slack = 8
	deadline := time.Now().Add(10 * time.Second)
	var g, fd int
	for {
		runtime.GC()
		g, fd = runtime.NumGoroutine(), openFDs()
		if g <= baseG+slack && fd <= baseFD+slack || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if g > baseG+slack {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the clients left, %d before:\n%s", g, baseG, buf[:runtime.Stack(buf, true)])
	}
	if fd > baseFD+slack {
		t.Errorf("%d file descriptors open after the clients left, %d before", fd, baseFD)
	}
}
