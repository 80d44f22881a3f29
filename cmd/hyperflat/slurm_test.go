package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// The Slurm test runs deploy/slurm/hyperflat.sbatch on a real Slurm cluster of one node,
// started on loopback from deploy/slurm/slurm.conf: munged, slurmctld and slurmd as child
// processes, everything they write under a temporary directory. The array's tasks run this
// test binary as the hyperflat command (TestMain), through a two-line wrapper script.

// slurmArgs is a quick ahsc run of 12 cells (6 methods × 2 repeats on the embedded iris) of
// about a second each: long enough for a shard to be caught with a cell done and one in
// flight, short enough for two arrays and a reference run to take about a minute.
var slurmArgs = []string{"ahsc", "--dataset=iris", "--preset=quick", "--seed=5", "--repeats=2",
	"--budget=20", "--bayesmark-budget=15", "--n1=6", "--n2=2", "--epochs=100"}

// slurmBins are the programs the test needs, from Debian's slurm-wlm and munge.
var slurmBins = []string{"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "scancel", "squeue", "sinfo"}

const slurmShards = 4

// slurmCluster is a running one-node cluster.
type slurmCluster struct {
	dir, conf, wrapper string
	bin                map[string]string
	env                []string // SLURM_CONF and the marker every process of the cluster carries
	daemons            []*exec.Cmd
	jobs               []string
}

// marker is the environment entry that every daemon, step and job process of this test's
// cluster inherits, so that the cleanup finds exactly the processes the test started.
func (c *slurmCluster) marker() string { return "HYPERFLAT_SLURM_TEST_DIR=" + c.dir }

// TestSlurmArray submits a 4-task array (each task --shard i/4 of one ahsc run) to Slurm
// with the run in a shared store, and checks that the assembled result is a single-process
// run's to the bit (wall times aside). Then it submits the array again on a fresh store,
// cancels one task (scancel) while it has a cell done and one in flight, requeues it, and
// checks that no finished cell was lost or computed again and that the result is the same.
// Last, the array's tasks are workers on the run submitted beforehand: the same result again.
func TestSlurmArray(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster and runs an ahsc run three times")
	}
	deadline := time.Now().Add(3*time.Minute + 30*time.Second) // the bound: under 4 minutes
	start := time.Now()
	c := startSlurm(t)
	t.Logf("cluster up in %v", time.Since(start).Round(time.Millisecond))
	phase := time.Now()

	code, ref, errs := runCLI(append(append([]string{"run"}, slurmArgs...), "--format=json", "--quiet")...)
	if code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, errs)
	}
	want := maskedResult(t, ref)
	t.Logf("single-process reference run: %v", time.Since(phase).Round(time.Millisecond))
	phase = time.Now()

	// 1. The array runs the run's four shards; the last assembles it.
	dsn := testStore(t, "slurm1")
	job := c.sbatch(t, dsn, append([]string{"shard"}, slurmArgs...)...)
	tasks := c.wait(t, job, deadline)
	for i := 0; i < slurmShards; i++ {
		if s := tasks[strconv.Itoa(i)]; s["JobState"] != "COMPLETED" || s["ExitCode"] != "0:0" {
			t.Errorf("task %s_%d: %s, exit code %s", job, i, s["JobState"], s["ExitCode"])
		}
	}
	cells := checkStoredRun(t, dsn, want)
	for _, cl := range cells {
		if cl.Attempts != 1 {
			t.Errorf("cell %s (shard %d) was claimed %d times, want once", cl.Key, cl.Index%slurmShards, cl.Attempts)
		}
	}
	t.Logf("array of 4 shards: %v", time.Since(phase).Round(time.Millisecond))
	if t.Failed() {
		return
	}
	slurmCancelAndRequeue(t, c, want, deadline)
	if t.Failed() {
		return
	}
	slurmWorkers(t, c, want, deadline)
}

// slurmCancelAndRequeue submits the run's shards, cancels one task midway and requeues it:
// no finished cell may be lost or computed twice.
func slurmCancelAndRequeue(t *testing.T, c *slurmCluster, want string, deadline time.Time) {
	phase := time.Now()
	// 2. One task is cancelled midway and requeued.
	dsn := testStore(t, "slurm2")
	job := c.sbatch(t, dsn, append([]string{"shard"}, slurmArgs...)...)
	shard := waitShardMidway(t, dsn, deadline)
	task := fmt.Sprintf("%s_%d", job, shard)
	c.run(t, "scancel", task)
	c.waitState(t, task, "CANCELLED", deadline)
	// On SIGTERM hyperflat hands back the cell it computes; Slurm may report the task
	// cancelled before the process is gone.
	var before map[string]store.Cell
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		before = cellsByKey(t, dsn)
		var held []string
		for key, cl := range before {
			if cl.Index%slurmShards == shard && cl.Status == store.Running {
				held = append(held, key)
			}
		}
		if len(held) == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("cells %v are still held 20 s after the cancel: SIGTERM should hand them back", held)
		}
	}
	// The cells in flight at the cancel are those of the shard claimed but not done.
	done, shardDone := 0, 0
	var inFlight []string
	for key, cl := range before {
		switch {
		case cl.Status == store.Done:
			done++
			if cl.Index%slurmShards == shard {
				shardDone++
			}
		case cl.Index%slurmShards == shard && cl.Attempts > 0:
			inFlight = append(inFlight, key)
		}
	}
	if shardDone == 0 || len(inFlight) == 0 {
		t.Fatalf("task %s was cancelled with %d of its cells done and %v in flight; want one of each", task, shardDone, inFlight)
	}
	t.Logf("cancelled task %s with %d cells done and %v in flight; %d of %d cells of the run done", task, shardDone, inFlight, done, len(before))
	c.run(t, "scontrol", "requeue", task)
	// Slurm 22.05 makes a requeued job wait two minutes before it is eligible; an
	// administrator's requeue may start it at once.
	c.run(t, "scontrol", "update", "JobId="+task, "StartTime=now")
	tasks := c.wait(t, job, deadline)
	for i := 0; i < slurmShards; i++ {
		s := tasks[strconv.Itoa(i)]
		restarts := "0"
		if i == shard {
			restarts = "1"
		}
		if s["JobState"] != "COMPLETED" || s["ExitCode"] != "0:0" || s["Restarts"] != restarts {
			t.Errorf("task %s_%d: %s, exit code %s, %s restarts (want COMPLETED, 0:0, %s)", job, i, s["JobState"], s["ExitCode"], s["Restarts"], restarts)
		}
	}
	after := cellsByKey(t, dsn)
	checkStoredRun(t, dsn, want)
	for key, cl := range after {
		b := before[key]
		switch {
		case b.Status == store.Done:
			if cl.Attempts != b.Attempts || cl.Worker != b.Worker || !cl.Finished.Equal(b.Finished) ||
				!bytes.Equal(cl.Outcome.Output, b.Outcome.Output) {
				t.Errorf("cell %s, done before the cancel (by %s, attempt %d, %v), changed: by %s, attempt %d, %v",
					key, b.Worker, b.Attempts, b.Finished, cl.Worker, cl.Attempts, cl.Finished)
			}
		case contains(inFlight, key):
			if cl.Attempts != 2 {
				t.Errorf("cell %s, in flight at the cancel, was claimed %d times, want 2", key, cl.Attempts)
			}
		case cl.Attempts != 1:
			t.Errorf("cell %s was claimed %d times, want once", key, cl.Attempts)
		}
	}
	out, _ := os.ReadFile(filepath.Join(c.dir, "job-"+task+".out"))
	if !bytes.Contains(out, []byte("start 2")) || !bytes.Contains(out, []byte("interrupted")) {
		t.Errorf("the requeued task's output does not show the interruption and the second start:\n%s", out)
	}
	t.Logf("array of 4 shards, one cancelled and requeued: %v", time.Since(phase).Round(time.Millisecond))
}

// slurmWorkers submits the run once and runs the array's tasks as workers on it.
func slurmWorkers(t *testing.T, c *slurmCluster, want string, deadline time.Time) {
	phase := time.Now()
	// 3. The run submitted once, the array's tasks are workers on it.
	dsn := testStore(t, "slurm3")
	code, sub, errs := runCLI(append(append([]string{"run"}, slurmArgs...), "--store", dsn, "--submit")...)
	id := regexp.MustCompile(`^run (\d+)`).FindStringSubmatch(sub)
	if code != 0 || id == nil {
		t.Fatalf("submit: exit %d: %q %s", code, sub, errs)
	}
	job := c.sbatch(t, dsn, "worker", "--run="+id[1])
	tasks := c.wait(t, job, deadline)
	for i := 0; i < slurmShards; i++ {
		if s := tasks[strconv.Itoa(i)]; s["JobState"] != "COMPLETED" || s["ExitCode"] != "0:0" {
			t.Errorf("worker task %s_%d: %s, exit code %s", job, i, s["JobState"], s["ExitCode"])
		}
	}
	for _, cl := range checkStoredRun(t, dsn, want) {
		if cl.Attempts != 1 || !strings.HasPrefix(cl.Worker, "slurm-"+job+"_") {
			t.Errorf("cell %s: claimed %d times, last by %q; want once, by a task of array %s", cl.Key, cl.Attempts, cl.Worker, job)
		}
	}
	t.Logf("array of 4 workers: %v", time.Since(phase).Round(time.Millisecond))
}

// startSlurm starts munged, slurmctld and slurmd, and waits for the node to be idle. The
// cleanup cancels the test's jobs and stops every process the cluster started, also when the
// test fails. It skips the test when the programs are absent or the test does not run as root.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	c := &slurmCluster{bin: map[string]string{}}
	var missing []string
	for _, name := range slurmBins {
		p, err := exec.LookPath(name)
		if err != nil {
			for _, dir := range []string{"/usr/sbin", "/sbin"} { // not on every user's PATH
				if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
					p = filepath.Join(dir, name)
				}
			}
		}
		if p == "" {
			missing = append(missing, name)
		}
		c.bin[name] = p
	}
	if len(missing) > 0 {
		t.Skipf("Slurm test skipped: %s not installed (apt-get install slurm-wlm munge; .ci/run installs them)", strings.Join(missing, ", "))
	}
	if os.Getuid() != 0 {
		t.Skip("Slurm test skipped: slurmd runs jobs as their submitter only when it runs as root (CI runs as root)")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	// munged wants every directory above its socket searchable by all; t.TempDir's are not.
	if c.dir, err = os.MkdirTemp("", "hyperflat-slurm-"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(c.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stop(t) })
	c.env = []string{"SLURM_CONF=" + filepath.Join(c.dir, "slurm.conf"), c.marker()}
	for _, d := range []string{"state", "spool/slurmd.localnode"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(c.dir, "munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(c.dir, "munge.socket")
	c.daemon(t, "munged", "--foreground", "--key-file="+filepath.Join(c.dir, "munge.key"), "--socket="+socket,
		"--pid-file="+filepath.Join(c.dir, "munged.pid"), "--seed-file="+filepath.Join(c.dir, "munged.seed"))
	waitFor(t, 10*time.Second, "munged's socket", func() bool { _, err := os.Stat(socket); return err == nil })

	tmpl, err := os.ReadFile("../../deploy/slurm/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.NewReplacer("@HOST@", host, "@CPUS@", strconv.Itoa(runtime.NumCPU()),
		"@MEMORY@", strconv.Itoa(memoryMiB(t)), "@DIR@", c.dir, "@USER@", "root",
		"@CTLDPORT@", freePort(t), "@SLURMDPORT@", freePort(t), "@MUNGESOCKET@", socket).Replace(string(tmpl))
	for _, line := range strings.Split(conf, "\n") {
		if m := regexp.MustCompile(`@[A-Z]+@`).FindString(line); m != "" && !strings.HasPrefix(line, "#") {
			t.Fatalf("deploy/slurm/slurm.conf has a placeholder the test does not fill: %s", m)
		}
	}
	c.conf = filepath.Join(c.dir, "slurm.conf")
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.daemon(t, "slurmctld", "-D", "-c", "-f", c.conf)
	c.daemon(t, "slurmd", "-D", "-f", c.conf, "-N", "localnode")
	waitFor(t, 30*time.Second, "the node to be idle", func() bool {
		out, err := c.output("sinfo", "-h", "-N", "-o", "%t")
		return err == nil && strings.TrimSpace(out) == "idle"
	})

	// The tasks run this test binary as hyperflat (see TestMain).
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c.wrapper = filepath.Join(c.dir, "hyperflat")
	script := "#!/bin/bash\nIFS=$'\\x1f' HYPERFLAT_TEST_CLI=\"$*\" exec " + shellQuote(self) + " -test.run='^$'\n"
	if err := os.WriteFile(c.wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

// daemon starts a cluster program in its own process group, its output in DIR/NAME.out.
func (c *slurmCluster) daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	f, err := os.Create(filepath.Join(c.dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(c.bin[name], args...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdout, cmd.Stderr = f, f
	// Pdeathsig: should the test binary itself be killed (go test's -timeout), the daemons go
	// with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c.daemons = append(c.daemons, cmd)
}

// output runs a Slurm client command against the cluster.
func (c *slurmCluster) output(name string, args ...string) (string, error) {
	cmd := exec.Command(c.bin[name], args...)
	cmd.Env = append(os.Environ(), c.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go func() { <-ctx.Done(); cmd.Process.Kill() }() // a client waits on a dead controller for long
	if err := cmd.Wait(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

func (c *slurmCluster) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := c.output(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sbatch submits deploy/slurm/hyperflat.sbatch as a 4-task array on the store dsn, and returns
// the array's job ID.
func (c *slurmCluster) sbatch(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	script, err := filepath.Abs("../../deploy/slurm/hyperflat.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(c.bin["sbatch"], append([]string{"--parsable", fmt.Sprintf("--array=0-%d", slurmShards-1),
		"--cpus-per-task=1", "--time=5", "--chdir=" + c.dir, "--output=" + filepath.Join(c.dir, "job-%A_%a.out"), script}, args...)...)
	// sbatch passes its environment to the tasks (--export=ALL).
	cmd.Env = append(os.Environ(), append(c.env, "HYPERFLAT_STORE="+dsn, "HYPERFLAT_BIN="+c.wrapper, "HYPERFLAT_LEASE=15s")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v: %s", err, out)
	}
	job := strings.TrimSpace(string(out))
	job, _, _ = strings.Cut(job, ";") // "ID;cluster" on a multi-cluster setup
	c.jobs = append(c.jobs, job)
	return job
}

// tasks returns the fields of scontrol show job for each array task of job, by task ID (a
// pending range of tasks is one record, under its range).
func (c *slurmCluster) tasks(t *testing.T, job string) map[string]map[string]string {
	t.Helper()
	out := c.run(t, "scontrol", "-o", "show", "job", job)
	tasks := map[string]map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		fields := map[string]string{}
		for _, kv := range strings.Fields(sc.Text()) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				fields[k] = v
			}
		}
		tasks[fields["ArrayTaskId"]] = fields
	}
	return tasks
}

var slurmFinal = map[string]bool{"COMPLETED": true, "FAILED": true, "CANCELLED": true, "TIMEOUT": true,
	"NODE_FAIL": true, "OUT_OF_MEMORY": true, "BOOT_FAIL": true, "DEADLINE": true, "PREEMPTED": true}

// wait waits until every task of the array has ended, and returns their states.
func (c *slurmCluster) wait(t *testing.T, job string, deadline time.Time) map[string]map[string]string {
	t.Helper()
	var tasks map[string]map[string]string
	waitFor(t, time.Until(deadline), "array "+job+" to end", func() bool {
		tasks = c.tasks(t, job)
		if len(tasks) != slurmShards {
			return false
		}
		for _, f := range tasks {
			if !slurmFinal[f["JobState"]] {
				return false
			}
		}
		return true
	})
	return tasks
}

// waitState waits until the array task (JOB_I) is in the given state.
func (c *slurmCluster) waitState(t *testing.T, task, state string, deadline time.Time) {
	t.Helper()
	waitFor(t, time.Until(deadline), task+" to be "+state, func() bool {
		for _, f := range c.tasks(t, task) {
			if got := f["JobState"]; got != state && slurmFinal[got] {
				t.Fatalf("%s ended %s, not %s", task, got, state)
			}
			return f["JobState"] == state
		}
		return false
	})
}

// stop cancels the test's jobs, stops the daemons (SIGTERM, then SIGKILL to their process
// groups), ends any process left that carries the cluster's marker (a job's), and deletes the
// directory; when the test failed, it logs the ends of the daemons' logs and the jobs' output
// first.
func (c *slurmCluster) stop(t *testing.T) {
	if len(c.jobs) > 0 && len(c.daemons) == 3 {
		c.output("scancel", c.jobs...)
		end := time.Now().Add(15 * time.Second)
		for time.Now().Before(end) {
			out, err := c.output("squeue", "-h", "-o", "%i")
			if err != nil || strings.TrimSpace(out) == "" {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		syscall.Kill(-d.Process.Pid, syscall.SIGTERM)
		exited := make(chan struct{})
		go func() { d.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-d.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		syscall.Kill(-d.Process.Pid, syscall.SIGKILL) // what the daemon forked into its group
	}
	for _, pid := range markedProcesses(c.marker()) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if t.Failed() {
		logs, _ := filepath.Glob(filepath.Join(c.dir, "*.log"))
		outs, _ := filepath.Glob(filepath.Join(c.dir, "*.out"))
		for _, p := range append(logs, outs...) {
			b, _ := os.ReadFile(p)
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("%s (end):\n%s", filepath.Base(p), b)
		}
	}
	os.RemoveAll(c.dir)
}

// markedProcesses lists the processes (other than this one) whose environment holds marker.
func markedProcesses(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == marker {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// testStore returns a fresh store for one array: a schema of its own in the PostgreSQL
// database of $HYPERFLAT_TEST_POSTGRES (CI's, from .ci/postgres.sh; dropped at the end), or
// else a SQLite file, which the tasks on this one node can share too.
func testStore(t *testing.T, name string) string {
	t.Helper()
	dsn := os.Getenv("HYPERFLAT_TEST_POSTGRES")
	if dsn == "" {
		t.Logf("HYPERFLAT_TEST_POSTGRES is not set: the array shares a SQLite store (.ci/postgres.sh starts PostgreSQL)")
		return filepath.Join(t.TempDir(), name+".db")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := fmt.Sprintf("%s_%d_%d", name, os.Getpid(), time.Now().UnixNano())
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", dsn)
		if err == nil {
			db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
			db.Close()
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

// waitShardMidway waits until some shard of the store's only run has a cell done, one
// running and one not started, so that its task is still at work a moment later, and returns
// the shard.
func waitShardMidway(t *testing.T, dsn string, deadline time.Time) int {
	t.Helper()
	shard := -1
	waitFor(t, min(time.Until(deadline), 90*time.Second), "a shard with a cell done, one in flight and one to go", func() bool {
		cells := cellsByKey(t, dsn)
		var done, running, pending [slurmShards]int
		finished := 0
		for _, cl := range cells {
			s := cl.Index % slurmShards
			switch cl.Status {
			case store.Done:
				done[s]++
				finished++
			case store.Running:
				running[s]++
			case store.Pending:
				pending[s]++
			}
		}
		if len(cells) > 0 && finished == len(cells) {
			t.Fatal("the run finished before a task could be cancelled midway: its cells are too short")
		}
		for s := range done {
			if done[s] > 0 && running[s] > 0 && pending[s] > 0 {
				shard = s
				return true
			}
		}
		return false
	})
	return shard
}

// cellsByKey returns the cells of the store's only run (none before it is created).
func cellsByKey(t *testing.T, dsn string) map[string]store.Cell {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]store.Cell{}
	if len(runs) == 0 {
		return m
	}
	if len(runs) > 1 {
		t.Fatalf("the store has %d runs, want the array's one", len(runs))
	}
	cells, err := st.Cells(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cells {
		m[cl.Key] = cl
	}
	return m
}

// checkStoredRun checks that the store's only run is finished, every cell done, and that its
// report is want; it returns the cells.
func checkStoredRun(t *testing.T, dsn, want string) map[string]store.Cell {
	t.Helper()
	cells := cellsByKey(t, dsn)
	for key, cl := range cells {
		if cl.Status != store.Done {
			t.Errorf("cell %s (shard %d) is %s", key, cl.Index%slurmShards, cl.Status)
		}
	}
	code, out, errs := runCLI("report", "--store", dsn, "--format=json")
	if code != 0 {
		t.Errorf("report: exit %d: %s", code, errs)
		return cells
	}
	if got := maskedResult(t, out); got != want {
		t.Errorf("the array's run reports\n%s\nwant the single-process run's\n%s", got, want)
	}
	return cells
}

// maskedResult re-encodes a result printed with --format=json with its wall-time columns
// blanked (the only values in which two computations of a run may differ) and its artifact
// list dropped. Numbers keep their printed digits, which round-trip float64s exactly.
func maskedResult(t *testing.T, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var r map[string]any
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("result JSON: %v\n%s", err, s)
	}
	delete(r, "artifacts")
	tables, _ := r["tables"].([]any)
	if len(tables) == 0 {
		t.Fatalf("a result without tables:\n%s", s)
	}
	for _, tb := range tables {
		tb := tb.(map[string]any)
		cols, _ := tb["columns"].([]any)
		rows, _ := tb["rows"].([]any)
		for j, col := range cols {
			switch col {
			case "seconds", "mean_seconds", "mean_seconds_per_run", "ahsc_share":
				for _, row := range rows {
					row.([]any)[j] = "<time>"
				}
			}
		}
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting %v for %s", limit.Round(time.Second), what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// memoryMiB reads MemTotal from /proc/meminfo.
func memoryMiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.Atoi(f[1])
			if err == nil {
				return kb / 1024
			}
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
