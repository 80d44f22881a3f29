package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvDataDir is the environment variable naming the data directory when no flag does.
const EnvDataDir = "HYPERFLAT_DATA"

// DefaultDataDir is the data directory used when neither a flag nor [EnvDataDir] names one
// and [SharedDataDir] finds no development copy.
const DefaultDataDir = "data"

// modulePath is hyperflat's module path, which identifies its go.mod when walking up.
const modulePath = "github.com/hyperflat/hyperflat"

// ResolveDir returns the data directory: flagValue when it is not empty, else the value of
// the environment variable [EnvDataDir] when set, else the development copy found by
// [SharedDataDir], else [DefaultDataDir].
func ResolveDir(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := os.Getenv(EnvDataDir); v != "" {
		return v
	}
	if d, err := SharedDataDir(); err == nil {
		return d
	}
	return DefaultDataDir
}

// SharedDataDir returns <repo root>/../shared/data, where development and CI machines keep
// the datasets: it walks up from the working directory to the directory whose go.mod
// declares hyperflat's module. It returns an error when there is no such go.mod or no such
// data directory; tests use that to skip.
func SharedDataDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if isHyperflatModule(filepath.Join(dir, "go.mod")) {
			data := filepath.Join(filepath.Dir(dir), "shared", "data")
			if fi, err := os.Stat(data); err != nil || !fi.IsDir() {
				return "", fmt.Errorf("datasets: no shared data directory %s next to the repository %s", data, dir)
			}
			return data, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("datasets: no go.mod of " + modulePath + " above " + wd)
		}
		dir = parent
	}
}

// isHyperflatModule reports whether path is a go.mod declaring hyperflat's module.
func isHyperflatModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == modulePath
		}
	}
	return false
}
