package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childEnv, when set, makes TestMultiProcessSQLite a worker: "DSN|RUN|NAME|CLAIMFILE".
const childEnv = "HYPERFLAT_STORE_TEST_CHILD"

// TestMultiProcessSQLite runs this test binary twice more as worker processes that claim and
// complete the cells of one run in one SQLite file; every cell must be claimed exactly once.
func TestMultiProcessSQLite(t *testing.T) {
	if arg := os.Getenv(childEnv); arg != "" {
		workerProcess(t, arg)
		return
	}
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "shared.db")
	s := openStore(t, dsn)
	const n = 80
	run := createRun(t, s, "processes", n)

	names := []string{"p1", "p2"}
	claimFiles := make([]string, len(names))
	cmds := make([]*exec.Cmd, len(names))
	outputs := make([]strings.Builder, len(names))
	for i, name := range names {
		claimFile := filepath.Join(t.TempDir(), name+".claims")
		cmd := exec.Command(os.Args[0], "-test.run=^TestMultiProcessSQLite$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%s|%s", childEnv, dsn, run.ID, name, claimFile))
		cmd.Stdout = &outputs[i]
		cmd.Stderr = &outputs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
		defer func() {
			if t.Failed() {
				t.Logf("worker %s output:\n%s", name, outputs[i].String())
			}
		}()
		claimFiles[i] = claimFile
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i+1, err, outputs[i].String())
		}
	}

	claimedBy := map[int][]string{}
	perWorker := map[string]int{}
	for i, claimFile := range claimFiles {
		worker := names[i]
		f, err := os.Open(claimFile)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			idx, err := strconv.Atoi(sc.Text())
			if err != nil {
				t.Fatal(err)
			}
			claimedBy[idx] = append(claimedBy[idx], worker)
			perWorker[worker]++
		}
		f.Close()
	}
	for i := range n {
		if len(claimedBy[i]) != 1 {
			t.Errorf("cell %d claimed by %v, want exactly one worker", i, claimedBy[i])
		}
	}
	t.Logf("cells per worker: %v", perWorker)
	for _, c := range cells(t, s, run.ID) {
		if c.Status != Done || c.Attempts != 1 || c.Outcome.Host != c.Worker ||
			len(claimedBy[c.Index]) != 1 || claimedBy[c.Index][0] != c.Worker {
			t.Errorf("cell %d: %s, %d attempts, worker %s, host %s, claimed by %v",
				c.Index, c.Status, c.Attempts, c.Worker, c.Outcome.Host, claimedBy[c.Index])
		}
	}
	if r, err := s.GetRun(ctx, run.ID); err != nil || r.Done != n {
		t.Errorf("run %+v, %v; want %d done", r, err, n)
	}
}

// workerProcess claims and completes cells until there are none, writing each claimed index
// to its claim file as soon as it has the lease.
func workerProcess(t *testing.T, arg string) {
	parts := strings.Split(arg, "|")
	if len(parts) != 4 {
		t.Fatalf("%s=%q", childEnv, arg)
	}
	dsn, name, claimFile := parts[0], parts[2], parts[3]
	run, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := openStore(t, dsn)
	f, err := os.Create(claimFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		l, err := s.Claim(ctx, ClaimOptions{Runs: []int64{run}, Worker: name, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			return
		}
		if _, err := fmt.Fprintln(f, l.Index); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // some work, so that the workers interleave
		out, _ := json.Marshal(map[string]any{"worker": name, "seed": l.Seed})
		if err := s.Complete(ctx, l, Outcome{Output: out, Host: name, Seconds: 0.001}); err != nil {
			t.Fatal(err)
		}
	}
}
