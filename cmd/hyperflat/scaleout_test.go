package main

import (
	"bytes"
	"context"
	"fmt"
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

// The tests below run the CLI in child processes, so that they can be killed: the test
// binary re-executes itself with HYPERFLAT_TEST_CLI set, and TestMain then behaves as the
// hyperflat command.
func TestMain(m *testing.M) {
	if args := os.Getenv("HYPERFLAT_TEST_CLI"); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// cli starts the command in a child process.
func cli(t *testing.T, stdout, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HYPERFLAT_TEST_CLI="+strings.Join(args, "\x1f"))
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// smallRun is a freedman run of 12 cells of a fraction of a second each.
var smallRun = []string{"freedman", "--seed", "3", "--repeats", "4", "--methods", "validation,aic,bic", "--quiet"}

// waitMidway waits until the latest run in the store has at least one cell done and one
// running (a process to interrupt midway), and fails the test if it finished first.
func waitMidway(t *testing.T, dsn string, deadline time.Duration) {
	t.Helper()
	ctx := context.Background()
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		if _, err := os.Stat(dsn); err == nil {
			st, err := store.Open(ctx, dsn)
			if err == nil {
				runs, err := st.Runs(ctx)
				st.Close()
				if err == nil && len(runs) > 0 {
					r := runs[len(runs)-1]
					if r.Done == r.Cells {
						t.Fatalf("the run finished (%d cells) before it could be interrupted", r.Cells)
					}
					if r.Done >= 1 && r.Running >= 1 {
						return
					}
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no cell done and one running within %v", deadline)
}

// waitForClaim waits until the store shows a cell running under a worker whose name has
// the given prefix, and returns that cell's key.
func waitForClaim(t *testing.T, dsn, prefix string, deadline time.Duration) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		runs, err := st.Runs(ctx)
		if err == nil && len(runs) > 0 {
			cells, err := st.Cells(ctx, runs[len(runs)-1].ID)
			if err == nil {
				for _, c := range cells {
					if c.Status == store.Running && strings.HasPrefix(c.Worker, prefix) {
						return c.Key
					}
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no cell claimed by %s within %v", prefix, deadline)
	return ""
}

// reference is the single-process, in-memory output of smallRun.
func reference(t *testing.T) string {
	t.Helper()
	code, out, errs := runCLI(append([]string{"run"}, smallRun...)...)
	if code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, errs)
	}
	return out
}

// TestKilledRunResumes kills a `hyperflat run --out DIR` process midway (SIGKILL: no
// cleanup at all, a cell left leased), then shows that `--resume` finishes it with the tables of an
// uninterrupted run, and that `hyperflat report` prints the same tables again.
func TestKilledRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI in subprocesses")
	}
	want := reference(t)
	dir := t.TempDir()
	var o1, e1 bytes.Buffer
	p := cli(t, &o1, &e1, append(append([]string{"run"}, smallRun...), "--out", dir)...)
	dsn := filepath.Join(dir, "hyperflat.db")
	// Kill it once a cell is done and another is held.
	waitMidway(t, dsn, 30*time.Second)
	if err := p.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.Wait()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(context.Background())
	st.Close()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs after the kill: %v %v", runs, err)
	}
	if runs[0].Done == runs[0].Cells {
		t.Fatalf("the run finished before it was killed (%d cells); the test needs longer cells", runs[0].Cells)
	}
	t.Logf("killed with %d of %d cells done, %d running", runs[0].Done, runs[0].Cells, runs[0].Running)

	// The killed process still holds a cell under the default one-minute lease: the resume
	// sees that its process is gone and redoes the cell at once.
	start := time.Now()
	code, out, errs := runCLI(append(append([]string{"run"}, smallRun...), "--out", dir, "--resume")...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the resume took %v: it waited for the dead process's lease", d)
	}
	if got := stripArtifacts(out); got != want {
		t.Errorf("resumed run printed\n%s\nwant (uninterrupted)\n%s", got, want)
	}
	code, rep, errs := runCLI("report", "--out", dir)
	if code != 0 || rep != stripArtifacts(out) {
		t.Errorf("report: exit %d (%s)\n%s\nwant the run's tables\n%s", code, errs, rep, stripArtifacts(out))
	}
	code, list, _ := runCLI("runs", "--out", dir, "--format", "csv")
	if code != 0 || !strings.Contains(list, fmt.Sprintf("finished,%d/%d,0,0", runs[0].Cells, runs[0].Cells)) {
		t.Errorf("runs: exit %d\n%s", code, list)
	}
}

// stripArtifacts drops the "wrote FILE" lines a run with --out prints after its tables.
func stripArtifacts(s string) string {
	return strings.TrimRight(regexp.MustCompile(`(?m)^wrote .*\n`).ReplaceAllString(s, ""), "\n") + "\n"
}

// TestWorkersShareARun submits a run to a store, starts two worker processes, kills one of
// them while it holds a cell, and checks that the other redoes that cell after its lease
// expires and that the union of their results is the single-process run. It uses SQLite,
// and PostgreSQL as well when HYPERFLAT_TEST_POSTGRES holds a DSN (CI starts one).
func TestWorkersShareARun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI in subprocesses")
	}
	want := reference(t)
	backends := map[string]string{"sqlite": filepath.Join(t.TempDir(), "shared.db")}
	if pg := os.Getenv("HYPERFLAT_TEST_POSTGRES"); pg != "" {
		backends["postgres"] = pg
	} else {
		t.Log("HYPERFLAT_TEST_POSTGRES is not set: PostgreSQL part skipped (.ci/postgres.sh starts one)")
	}
	for name, dsn := range backends {
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(append(append([]string{"run"}, smallRun...), "--store", dsn, "--submit")...)
			if code != 0 {
				t.Fatalf("submit: exit %d: %s", code, errs)
			}
			id := regexp.MustCompile(`^run (\d+)`).FindStringSubmatch(out)
			if id == nil {
				t.Fatalf("submit printed %q", out)
			}
			var oa, ea, ob, eb bytes.Buffer
			a := cli(t, &oa, &ea, "worker", "--store", dsn, "--run", id[1], "--lease", "2s", "--name", "A", "--quiet")
			b := cli(t, &ob, &eb, "worker", "--store", dsn, "--run", id[1], "--lease", "2s", "--name", "B", "--quiet")
			killed := waitForClaim(t, dsn, "A/", 30*time.Second)
			if err := a.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			a.Wait()
			if err := b.Wait(); err != nil {
				t.Fatalf("worker B: %v: %s", err, eb.String())
			}
			if !strings.Contains(ob.String(), "computed") {
				t.Errorf("worker B printed %q", ob.String())
			}
			st, err := store.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var runID int64
			fmt.Sscan(id[1], &runID)
			cells, err := st.Cells(context.Background(), runID)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cells {
				if c.Status != store.Done {
					t.Errorf("cell %s is %s", c.Key, c.Status)
				}
				if c.Key == killed && (!strings.HasPrefix(c.Worker, "B/") || c.Attempts < 2) {
					t.Errorf("cell %s, held by the killed worker, was finished by %s after %d attempts; want B, ≥ 2", c.Key, c.Worker, c.Attempts)
				}
			}
			code, rep, errs := runCLI("report", "--store", dsn, "--run", id[1])
			if code != 0 {
				t.Fatalf("report: exit %d: %s", code, errs)
			}
			if rep != want {
				t.Errorf("the workers' run reports\n%s\nwant the single-process run\n%s", rep, want)
			}
		})
	}
}

// TestInterruptStopsCleanly sends Ctrl-C (SIGINT) to a run: it must stop promptly with exit
// status 1 and a message, keep its finished cells, hand back the cell in flight (no cell
// left running), and print no panic.
func TestInterruptStopsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI in subprocesses")
	}
	dir := t.TempDir()
	var o, e bytes.Buffer
	p := cli(t, &o, &e, append(append([]string{"run"}, smallRun...), "--out", dir)...)
	dsn := filepath.Join(dir, "hyperflat.db")
	waitMidway(t, dsn, 30*time.Second)
	if err := p.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := p.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("interrupted run: %v, want exit status 1; stderr %s", err, e.String())
	}
	if !strings.Contains(e.String(), "interrupted") || !strings.Contains(e.String(), "--resume") || strings.Contains(e.String(), "goroutine") {
		t.Errorf("stderr %q", e.String())
	}
	t.Logf("stopped %v after the signal", time.Since(start).Round(time.Millisecond))
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background())
	if err != nil || len(runs) != 1 || runs[0].Running != 0 || runs[0].Done == runs[0].Cells {
		t.Fatalf("after Ctrl-C: %+v %v; want cells kept, none running, not finished", runs, err)
	}
}

// submitSmallRuns submits smallRun with each seed to the store and returns the runs' IDs.
func submitSmallRuns(t *testing.T, dsn string, seeds ...string) []string {
	t.Helper()
	var ids []string
	for _, seed := range seeds {
		args := append([]string{"run"}, smallRun...)
		args[3] = seed // smallRun's --seed value
		code, out, errs := runCLI(append(args, "--store", dsn, "--submit")...)
		id := regexp.MustCompile(`^run (\d+)`).FindStringSubmatch(out)
		if code != 0 || id == nil {
			t.Fatalf("submit: exit %d: %q %s", code, out, errs)
		}
		ids = append(ids, id[1])
	}
	return ids
}

// TestWorkerServesRunsInOrder: one worker given two submitted runs (the later one first)
// computes every cell of both, the first listed run's before the other's, and assembles both.
func TestWorkerServesRunsInOrder(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "order.db")
	ids := submitSmallRuns(t, dsn, "3", "4")
	code, out, errs := runCLI("worker", "--store", dsn, "--run", ids[1]+","+ids[0], "--quiet")
	if code != 0 || !strings.Contains(out, "computed 24 cells") {
		t.Fatalf("worker: exit %d: %q %s", code, out, errs)
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var lastOfFirst, firstOfSecond time.Time // the listed-first run's latest claim, the other's earliest
	for i, id := range []string{ids[1], ids[0]} {
		var runID int64
		fmt.Sscan(id, &runID)
		r, err := st.GetRun(context.Background(), runID)
		if err != nil || r.Done != 12 || !r.HasResult {
			t.Fatalf("run %s: %+v, %v; want 12 cells done and a result", id, r, err)
		}
		cs, err := st.Cells(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			switch {
			case i == 0 && c.Started.After(lastOfFirst):
				lastOfFirst = c.Started
			case i == 1 && (firstOfSecond.IsZero() || c.Started.Before(firstOfSecond)):
				firstOfSecond = c.Started
			}
		}
	}
	if !lastOfFirst.Before(firstOfSecond) {
		t.Errorf("run %s (listed second) started a cell at %v, before run %s's (listed first) last at %v",
			ids[0], firstOfSecond, ids[1], lastOfFirst)
	}
}

// TestRetireRun: a retired run is passed by a worker that serves every run and refused to a
// shard, shows as retired in hyperflat runs, and run --resume reopens and finishes it.
func TestRetireRun(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "retire.db")
	ids := submitSmallRuns(t, dsn, "3", "4")
	if code, out, errs := runCLI("retire", "--store", dsn, "--run", ids[0]); code != 0 || out != "run "+ids[0]+": 12 cells retired; retired, 0/12 cells done\n" {
		t.Fatalf("retire: exit %d: %q %s", code, out, errs)
	}
	if code, out, errs := runCLI("worker", "--store", dsn, "--quiet"); code != 0 || !strings.Contains(out, "computed 12 cells") {
		t.Fatalf("worker: exit %d: %q %s", code, out, errs)
	}
	exports := t.TempDir()
	if code, _, errs := runCLI("export", "--store", dsn, "--dir", exports); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	paths, _ := filepath.Glob(filepath.Join(exports, "*.jsonl.gz"))
	code, out, errs := runCLI(append([]string{"import", "--store", filepath.Join(t.TempDir(), "copy.db")}, paths...)...)
	if code != 0 || !strings.Contains(out, "0 cells filled, 0 already done here, 12 retired (hyperflat retire)\t0/12 cells done") {
		t.Fatalf("import of a retired run's export: exit %d: %q %s", code, out, errs)
	}
	code, out, errs = runCLI("runs", "--store", dsn, "--format", "csv")
	if code != 0 || !strings.Contains(out, "\n"+ids[0]+",freedman,retired,0/12,") || !strings.Contains(out, "\n"+ids[1]+",freedman,finished,12/12,") {
		t.Fatalf("runs: exit %d: %q %s", code, out, errs)
	}
	if code, _, errs := runCLI("report", "--store", dsn, "--run", ids[0]); code == 0 || !strings.Contains(errs, "is retired: 0 of 12 cells done, 0 failed, 12 retired") {
		t.Fatalf("report of the retired run: exit %d: %s", code, errs)
	}
	retired := append(append([]string{"run"}, smallRun...), "--store", dsn)
	if code, _, errs := runCLI(append(retired, "--shard", "0/2")...); code == 0 || !strings.Contains(errs, "run "+ids[0]+" is retired") || !strings.Contains(errs, "--resume reopens it") {
		t.Fatalf("a shard of the retired run: exit %d: %s", code, errs)
	}
	if code, out, errs := runCLI(append(retired, "--resume")...); code != 0 || !strings.Contains(out, "summary") {
		t.Fatalf("run --resume of the retired run: exit %d: %q %s", code, out, errs)
	}
	if code, out, errs := runCLI("runs", "--store", dsn, "--format", "csv"); code != 0 || !strings.Contains(out, "\n"+ids[0]+",freedman,finished,12/12,") {
		t.Fatalf("runs after --resume: exit %d: %q %s", code, out, errs)
	}
	if code, _, errs := runCLI("retire", "--store", dsn, "--run", "99"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("retire of an absent run: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI("retire", "--store", dsn); code != 2 || !strings.Contains(errs, "--run ID") {
		t.Errorf("retire without runs: exit %d: %s", code, errs)
	}
}
