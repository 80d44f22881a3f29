package dashboard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestVendoredLibrary: the charting library the binary embeds is the version web/package-lock.json
// pins, and the committed file is the one web/rebuild.sh recorded (its SHA-256 in the manifest):
// a hand-edited or stale copy fails here. The lockfile's integrity field hashes the npm tarball,
// not the file, hence the manifest the rebuild writes.
func TestVendoredLibrary(t *testing.T) {
	lockBytes, err := os.ReadFile("web/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lockBytes, &lock); err != nil {
		t.Fatalf("web/package-lock.json: %v", err)
	}
	pinned := lock.Packages["node_modules/echarts"].Version
	if pinned == "" {
		t.Fatal("web/package-lock.json pins no echarts")
	}
	manifest, err := assets.ReadFile("assets/static/vendor/MANIFEST")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(manifest))
	if len(f) != 4 || f[0] != "echarts" {
		t.Fatalf("vendor/MANIFEST %q: want \"echarts VERSION SHA256 FILE\"", manifest)
	}
	if f[1] != pinned {
		t.Errorf("vendor/MANIFEST has echarts %s, the lockfile pins %s: run bash dashboard/web/rebuild.sh", f[1], pinned)
	}
	lib, err := assets.ReadFile("assets/static/vendor/" + f[3])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lib)
	if got := hex.EncodeToString(sum[:]); got != f[2] {
		t.Errorf("vendor/%s has SHA-256 %s, the manifest %s: the committed file is not the one rebuild.sh copied", f[3], got, f[2])
	}
	if !strings.Contains(string(lib), `t.version="`+pinned+`"`) {
		t.Errorf("vendor/%s does not declare version %s", f[3], pinned)
	}
	for _, name := range []string{"LICENSE-echarts", "NOTICE-echarts"} {
		if _, err := assets.ReadFile("assets/static/vendor/" + name); err != nil {
			t.Errorf("the library's licence: %v", err)
		}
	}
}
