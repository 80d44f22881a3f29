package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fixture is experiments/ahsc's hand-made Bayesmark folder (its scores are worked by hand in
// bmscore_test.go: stored baseline, RandomSearch 50 and ahsc 72.5).
var fixture = filepath.Join("..", "..", "experiments", "ahsc", "testdata", "bayesmark")

func readCSV(t *testing.T, text string) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("CSV %q: %v", text, err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func TestBayesmarkScoreCommand(t *testing.T) {
	code, out, errs := runCLI("bayesmark", "score", fixture)
	if code != 0 || !strings.HasPrefix(out, "Bayesmark mean scores by optimizer") || !strings.Contains(out, "ahsc 72.50, RandomSearch 50.00") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 100 && strings.HasPrefix(l, "│") {
			t.Errorf("table line of %d columns: %s", len([]rune(l)), l)
		}
	}
	file := filepath.Join(t.TempDir(), "s.csv")
	if code, _, errs := runCLI("bayesmark", "score", "--baseline", "recompute", "--format", "csv", "--out", file, "--resamples", "500", "--seed", "9", fixture); code != 0 {
		t.Fatal(errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readCSV(t, string(b)) {
		mean, _ := strconv.ParseFloat(r["mean"], 64)
		want := map[string]float64{"RandomSearch": 29.166666666, "ahsc": 64.583333333}[r["method"]]
		if d := mean - want; d > 1e-6 || d < -1e-6 || r["baseline"] != "recomputed" || r["resamples"] != "500" || r["seed"] != "9" || r["eval_path"] != "derived/eval.json" {
			t.Errorf("%v", r)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bayesmark", "score"}, 2, "name at least one folder"},
		{[]string{"bayesmark", "score", "--format", "xml", fixture}, 2, "--format"},
		{[]string{"bayesmark", "score", t.TempDir()}, 1, "no Bayesmark output folder"},
		{[]string{"bayesmark", "score", "--baseline", "best", fixture}, 1, "want auto, stored or recompute"},
		{[]string{"bayesmark", "frob"}, 2, "unknown subcommand"},
		{[]string{"bayesmark", "score", "--git-dir", t.TempDir(), "nocolon"}, 1, "COMMIT:PATH-GLOB"},
	} {
		code, _, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestBayesmarkScoreFromGit reads the fixture from a commit of a repository, as the
// authors' stored outputs are read from a mirror of theirs, and names the commit.
func TestBayesmarkScoreFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	dst := filepath.Join(repo, "results", "toy_stcvx_min", "run_1")
	if err := os.CopyFS(dst, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	// A folder the glob does not match, holding a malformed file that must not be read.
	if err := os.MkdirAll(filepath.Join(repo, "results", "other", "derived"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "results", "other", "derived", "eval.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "fixture")
	head := git("rev-parse", "HEAD")
	code, out, errs := runCLI("bayesmark", "score", "--git-dir", filepath.Join(repo, ".git"), "--format", "csv", head[:7]+":results/*_min")
	if code != 0 {
		t.Fatal(errs)
	}
	rows := readCSV(t, out)
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r["source_commit"] != head || r["source"] != "results/toy_stcvx_min/run_1" || r["eval_path"] != "results/toy_stcvx_min/run_1/derived/eval.json" ||
			r["baseline_path"] != "results/toy_stcvx_min/run_1/derived/baseline.json" || r["baseline"] != "stored" {
			t.Errorf("%v", r)
		}
	}
	// numpy.percentile's quartiles of RandomSearch's 16 16 24 24 32 32 32 32 (positions 1.75,
	// 3.5, 5.25) and ahsc's 17 17 25 25 32 32 32 32.
	code, out, errs = runCLI("bayesmark", "picks", "--git-dir", filepath.Join(repo, ".git"), head+":results/toy_stcvx_min")
	if code != 0 || !strings.Contains(out, "ahsc 23/28.5/32") || !strings.Contains(out, "RandomSearch 22/28/32") {
		t.Errorf("picks: exit %d\n%s\n%s", code, out, errs)
	}
	// A commit and a directory in one call; the KS distance of RandomSearch's values to
	// ahsc's: their ECDFs differ by 2/8 from 16 to 17 and from 24 to 25, else less.
	code, out, errs = runCLI("bayesmark", "picks", "--reference", "ahsc", "--format", "csv", "--git-dir", filepath.Join(repo, ".git"), head+":results/toy_stcvx_min", fixture)
	if code != 0 {
		t.Fatal(errs)
	}
	rows = readCSV(t, out)
	if len(rows) != 6 { // 2 optimizers × (commit, directory, pooled)
		t.Fatalf("%d rows:\n%s", len(rows), out)
	}
	for _, r := range rows {
		want := map[string]string{"RandomSearch": "0.25", "ahsc": "0"}[strings.SplitN(r["optimizer"], "_", 2)[0]]
		if r["ks_to_ahsc"] != want {
			t.Errorf("%v: KS %s, want %s", r, r["ks_to_ahsc"], want)
		}
	}
	for _, bad := range []string{"--output=x:results/*", "0123456789abcdef:results/*"} {
		if code, _, errs := runCLI("bayesmark", "score", "--git-dir", filepath.Join(repo, ".git"), "--", bad); code != 1 || !strings.Contains(errs, "commit") {
			t.Errorf("%s: exit %d, %s", bad, code, errs)
		}
	}
	if code, _, errs := runCLI("bayesmark", "picks", "--reference", "tpe", fixture); code != 1 || !strings.Contains(errs, "no such optimizer") {
		t.Errorf("--reference tpe: exit %d, %s", code, errs)
	}
}

func TestKSDistance(t *testing.T) {
	if d := ksDistance([]float64{1, 2, 3}, []float64{2, 3, 4}); d < 1.0/3-1e-12 || d > 1.0/3+1e-12 {
		t.Errorf("KS %v, want 1/3", d)
	}
	if d := ksDistance([]float64{1, 2}, []float64{3, 4, 5}); d != 1 {
		t.Errorf("KS of disjoint samples %v, want 1", d)
	}
	if d := ksDistance([]float64{1, 1, 2, 2}, []float64{2, 1}); d != 0 {
		t.Errorf("KS of equal distributions %v, want 0", d)
	}
	// F_a jumps to 1 at 5; F_b is 1/4 at 1, 1/2 at 5, 1 at 9: the largest gap is 1/2, at 5.
	if d := ksDistance([]float64{5}, []float64{1, 5, 9, 9}); d != 0.5 {
		t.Errorf("KS %v, want 1/2", d)
	}
}

// TestBayesmarkOutRoundTrip: an ahsc run written in Bayesmark's layout by run
// --bayesmark-out, and its stored copy by report --bayesmark-out, scored by bayesmark
// score, give the run's own summary means.
func TestBayesmarkOutRoundTrip(t *testing.T) {
	dir := t.TempDir()
	small := []string{"--dataset", "iris", "--methods", "ahsc,random", "--repeats", "2", "--n1", "4", "--n2", "2",
		"--bayesmark-budget", "4", "--epochs", "3", "--folds", "2", "--quiet", "--seed", "5"}
	code, out, errs := runCLI(append([]string{"run", "ahsc", "--out", filepath.Join(dir, "run"), "--bayesmark-out", filepath.Join(dir, "bm"), "--format", "json"}, small...)...)
	if code != 0 || !strings.Contains(errs, "Bayesmark files") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Tables []struct {
			Name    string   `json:"name"`
			Columns []string `json:"columns"`
			Rows    [][]any  `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, tb := range res.Tables {
		if tb.Name != "summary" {
			continue
		}
		col := func(n string) int { return slices.Index(tb.Columns, n) }
		for _, r := range tb.Rows {
			m := r[col("method")].(string)
			if m == "random" {
				m = "RandomSearch"
			}
			want[m] = r[col("mean")].(float64)
		}
	}
	if len(want) != 2 {
		t.Fatalf("summary means %v", want)
	}
	if code, _, errs := runCLI("run", "ahsc", "--dataset", "vehicle", "--bayesmark-out", filepath.Join(dir, "bm3")); code != 2 || !strings.Contains(errs, "none of Bayesmark's datasets") {
		t.Errorf("--bayesmark-out on vehicle: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI("report", "--out", filepath.Join(dir, "run"), "--bayesmark-out", filepath.Join(dir, "bm2"), "--format", "csv"); code != 0 {
		t.Fatal(errs)
	}
	for _, bm := range []string{"bm", "bm2"} {
		code, out, errs := runCLI("bayesmark", "score", "--format", "csv", filepath.Join(dir, bm))
		if code != 0 {
			t.Fatal(errs)
		}
		for _, r := range readCSV(t, out) {
			got, _ := strconv.ParseFloat(r["mean"], 64)
			if d := got - want[r["method"]]; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s %s: bayesmark score %v, the run's summary %v", bm, r["method"], got, want[r["method"]])
			}
		}
	}
}
