package dashboard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
)

// chromium finds a headless-capable Chromium: Debian's package installs /usr/bin/chromium.
func chromium() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// artifacts is where the test's screenshots go: $HYPERFLAT_ARTIFACTS, kept after the run, or
// the test's temporary directory.
func artifacts(t *testing.T) string {
	if dir := os.Getenv("HYPERFLAT_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// browse runs headless Chromium on url with the extra flags and returns its stdout. The pages
// are rendered on the server, so what Chromium has at its load event is the page; a
// --virtual-time-budget would never run out, since virtual time stops while the page's event
// stream is open.
func browse(t *testing.T, bin, url string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + t.TempDir(), "--hide-scrollbars"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(flags, " "), err, stderr.String())
	}
	return stdout.String()
}

// serveFreedman serves the package's stored freedman run and returns its page's URL and its
// stored result.
func serveFreedman(t *testing.T) (string, *experiments.Result) {
	t.Helper()
	ts, st := serve(t, freedmanStore(t), Config{})
	runs, err := st.Runs(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	return fmt.Sprintf("%s/runs/%d", ts.URL, runs[0].ID), storedResult(t, st, runs[0].ID)
}

// TestBrowser: the run page, as headless Chromium renders it, holds the headline table's
// values and the run's figures; screenshots of it are written as artifacts (run.png at the
// 1280×900 of a laptop screen, run-full.png tall enough to show the figures).
func TestBrowser(t *testing.T) {
	bin, ok := chromium()
	if !ok {
		t.Skip("no chromium binary on PATH (Debian: apt-get install chromium; .ci/run installs it)")
	}
	url, res := serveFreedman(t)

	dom := browse(t, bin, url, "--dump-dom")
	summary := res.Table("summary")
	for i := range summary.Rows {
		for _, col := range []string{"method", "test_mse", "objective"} {
			if v := experiments.FormatCell(summary.Value(i, col)); !strings.Contains(dom, ">"+v+"</td>") {
				t.Errorf("the rendered page has no cell %q (summary row %d, %s)", v, i, col)
			}
		}
	}
	// The answer first, as the terminal prints it; then the views, the figures, and the
	// reference tables collapsed.
	answer, views, figures, tables := strings.Index(dom, `id="answer"`), strings.Index(dom, `id="views"`),
		strings.Index(dom, `id="figures"`), strings.Index(dom, `id="tables"`)
	if answer < 0 || !(answer < views && views < figures && figures < tables) {
		t.Errorf("the page's order: answer at %d, views %d, figures %d, tables %d", answer, views, figures, tables)
	}
	if res.Answer == "" || !strings.Contains(dom, ">"+strings.ReplaceAll(res.Answer, "<", "&lt;")+"</p>") {
		t.Errorf("the page does not open with the answer %q", res.Answer)
	}
	if strings.Contains(dom[tables:], "<details open") {
		t.Error("a reference table is open")
	}
	if !strings.Contains(dom, `<img src="/runs/1/figures/freedman_`) || !strings.Contains(dom, `/figures/distribution_`) {
		t.Errorf("the rendered page has no figures:\n%.4000s", dom)
	}

	dir := artifacts(t)
	for _, shot := range []struct{ name, size string }{{"run.png", "1280,900"}, {"run-full.png", "1280,3000"}} {
		path := filepath.Join(dir, shot.name)
		browse(t, bin, url, "--screenshot="+path, "--window-size="+shot.size)
		fi, err := os.Stat(path)
		if err != nil || fi.Size() < 10_000 {
			t.Fatalf("screenshot %s: %v, %v", path, fi, err)
		}
		t.Logf("screenshot: %s", path)
	}
}
