package main

import (
	"bytes"
	"context"
	"database/sql"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// TestWorkerTakesOwnBuildsRuns: a worker leaves the cells of a run another build began (and
// says so), refuses such a run named with --run or resumed, and computes it with --any-build
// (worker's, and run's with --resume).
// (A worker from another commit silently finished another build's run.)
func TestWorkerTakesOwnBuildsRuns(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "builds.db")
	ids := submitSmallRuns(t, dsn, "3")
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	const other = "0123456789ab+dirty.exe-abcdefabcdef blas=gonum"
	if _, err := db.Exec(`UPDATE runs SET build = $1`, other); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, errs := runCLI("worker", "--store", dsn, "--quiet")
	if code != 0 || !strings.Contains(out, "computed 0 cells") || !strings.Contains(errs, "run "+ids[0]+" has 12 cells left, begun by build "+other) {
		t.Errorf("worker: exit %d: %q %s; want no cell computed and the other build named", code, out, errs)
	}
	if code, _, errs := runCLI("worker", "--store", dsn, "--run", ids[0], "--quiet"); code != 1 || !strings.Contains(errs, "--any-build") {
		t.Errorf("worker --run: exit %d: %s; want the run refused", code, errs)
	}
	if code, _, errs := runCLI(append(append([]string{"run"}, smallRun...), "--store", dsn, "--resume")...); code != 1 || !strings.Contains(errs, "was begun by build "+other) {
		t.Errorf("run --resume: exit %d: %s; want the run refused", code, errs)
	}
	if code, out, errs := runCLI("worker", "--store", dsn, "--any-build", "--quiet"); code != 0 || !strings.Contains(out, "computed 12 cells") {
		t.Errorf("worker --any-build: exit %d: %q %s", code, out, errs)
	}
	if code, _, errs := runCLI(append(append([]string{"run"}, smallRun...), "--store", dsn, "--resume", "--any-build")...); code != 0 {
		t.Errorf("run --resume --any-build: exit %d: %s", code, errs)
	}
}

// TestWorkerRidesOutPostgresRestart restarts a PostgreSQL server of its own (4 s down) while a
// worker with --wait=60s computes a run on it: the worker stays up, commits the cells it
// finished while the server was down, and computes no cell twice. (Workers exited with status
// 1, and a cell just finished was computed again later.) It needs the postgresql binaries,
// which CI installs with the server it starts (.ci/postgres.sh).
func TestWorkerRidesOutPostgresRestart(t *testing.T) {
	if testing.Short() || os.Getenv("HYPERFLAT_TEST_POSTGRES") == "" {
		t.Skip("needs PostgreSQL (HYPERFLAT_TEST_POSTGRES, .ci/postgres.sh)")
	}
	script, err := filepath.Abs("../../.ci/postgres.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "hyperflat-pg-restart-*") // not under t.TempDir: the postgres user must reach it
	if err != nil {
		t.Fatal(err)
	}
	pg := func(args ...string) string {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "HYPERFLAT_PG_DIR="+dir, "HYPERFLAT_PG_PORT=55329")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("postgres.sh %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	m := regexp.MustCompile(`HYPERFLAT_TEST_POSTGRES='([^']+)'`).FindStringSubmatch(pg("start"))
	t.Cleanup(func() { pg("clean") })
	if m == nil {
		t.Fatal("postgres.sh start printed no DSN")
	}
	dsn := m[1]
	run := append([]string{"run"}, smallRun...)
	run[5] = "8" // --repeats: 24 cells
	code, out, errs := runCLI(append(run, "--store", dsn, "--submit")...)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s%s", code, out, errs)
	}
	var wo, we bytes.Buffer
	w := cli(t, &wo, &we, "worker", "--store", dsn, "--workers", "2", "--wait=60s")
	defer w.Process.Kill()
	exited := make(chan error, 1)
	go func() { exited <- w.Wait() }()

	ctx := context.Background()
	runState := func() (store.Run, []store.Cell, error) {
		st, err := store.OpenReadOnly(ctx, dsn)
		if err != nil {
			return store.Run{}, nil, err
		}
		defer st.Close()
		r, err := st.GetRun(ctx, 1)
		if err != nil {
			return r, nil, err
		}
		cells, err := st.Cells(ctx, 1)
		return r, cells, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if r, _, err := runState(); err == nil && r.Done >= 2 {
			if r.Done > 16 {
				t.Fatalf("the run went too far (%d cells done) before the restart", r.Done)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no cell done in a minute; worker: %s", we.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pg("restart", "4")
	for {
		select {
		case err := <-exited:
			t.Fatalf("the worker exited (%v) across the restart: %s", err, we.String())
		case <-time.After(200 * time.Millisecond):
		}
		r, cells, err := runState()
		if err == nil && r.HasResult {
			for _, c := range cells {
				if c.Attempts != 1 {
					t.Errorf("cell %s was claimed %d times: a finished result was dropped", c.Key, c.Attempts)
				}
			}
			break
		}
		if time.Now().After(deadline.Add(60 * time.Second)) {
			t.Fatalf("the run did not finish after the restart: %+v, %v; worker: %s", r, err, we.String())
		}
	}
	w.Process.Signal(syscall.SIGINT)
	<-exited
	if !strings.Contains(we.String(), "the store is unreachable") {
		t.Errorf("the worker did not say the store was unreachable: %s", we.String())
	}
	t.Logf("worker: %s", we.String())
}

// TestWorkerWaitsForTheStore: a worker started with --wait=D while the database is down (a pod
// restarted with it) retries for D, saying so, then fails naming the outage; without --wait it
// fails at once.
func TestWorkerWaitsForTheStore(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dsn := "postgres://postgres@" + ln.Addr().String() + "/none?sslmode=disable&connect_timeout=2"
	ln.Close() // nothing listens there now
	start := time.Now()
	code, _, errs := runCLI("worker", "--store", dsn)
	if code != 1 || time.Since(start) > 5*time.Second || strings.Contains(errs, "retrying") {
		t.Errorf("without --wait: exit %d after %v: %s", code, time.Since(start), errs)
	}
	start = time.Now()
	code, _, errs = runCLI("worker", "--store", dsn, "--wait=1s")
	if took := time.Since(start); code != 1 || took < time.Second || took > 20*time.Second ||
		!strings.Contains(errs, "retrying for up to 1s") || !strings.Contains(errs, "the store was unreachable for") {
		t.Errorf("--wait=1s: exit %d after %v: %s", code, took, errs)
	}
}
