package graph

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"
)

// setSwitch puts environment switch name at value for the rest of the test, as if the process
// had started with name=value, and restores it when the test ends.
func setSwitch(t testing.TB, name, value string) {
	t.Helper()
	s, err := lookupSwitch(name)
	if err != nil {
		t.Fatal(err)
	}
	old := s.value
	if err := s.apply(value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.apply(old); err != nil {
			t.Error(err)
		}
	})
}

func TestSetSwitchRestores(t *testing.T) {
	was := fuseEnabled
	t.Run("nofuse", func(t *testing.T) {
		setSwitch(t, "HYPERFLAT_NOFUSE", "1")
		if fuseEnabled {
			t.Fatal("HYPERFLAT_NOFUSE=1 left fusion on")
		}
	})
	if fuseEnabled != was {
		t.Fatalf("fusion %v after the subtest, %v before", fuseEnabled, was)
	}
	s, err := lookupSwitch("HYPERFLAT_SGEMM")
	if err != nil {
		t.Fatal(err)
	}
	mode := sgemmMode
	if err := s.apply("kernel"); err == nil || !strings.Contains(err.Error(), "HYPERFLAT_SGEMM") {
		t.Errorf("HYPERFLAT_SGEMM=kernel: err = %v; want one naming the switch", err)
	}
	if sgemmMode != mode {
		t.Errorf("a refused value changed the mode to %q", sgemmMode)
	}
	if _, err := lookupSwitch("HYPERFLAT_NOSUCH"); err == nil {
		t.Error("lookupSwitch found a switch that does not exist")
	}
}

// TestEnvSwitchesInCacheKey reads every switch while the tests run. graph reads them in init,
// before go test starts logging what a test binary reads from the environment, so without this
// read `HYPERFLAT_SIMD=avx2 go test ./graph` is answered from the cache of a run on the
// AVX-512 path (CI's AVX2 step then tested nothing). A -run filter that leaves this test out
// loses that again: add -count=1 there.
func TestEnvSwitchesInCacheKey(t *testing.T) {
	for _, s := range envSwitches {
		if v, _ := os.LookupEnv(s.name); v != s.value {
			t.Errorf("%s=%q in the environment, but %q in effect", s.name, v, s.value)
		}
	}
}

// TestEnvSwitchesMatchREADME checks that README.md's "Environment switches" table has exactly
// graph's switches as its graph rows, with the same defaults and meanings.
func TestEnvSwitchesMatchREADME(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Environment switches\n")
	if !ok {
		t.Fatal(`README.md has no "## Environment switches" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	type row struct{ def, meaning string }
	readme := map[string]row{}
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `HYPERFLAT_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 4 {
			t.Fatalf("README row %q: %d cells, want 4 (variable, read by, default, meaning)", line, len(cells))
		}
		for i := range cells {
			cells[i] = strings.ReplaceAll(strings.TrimSpace(cells[i]), "`", "")
		}
		if cells[1] == "graph" {
			readme[cells[0]] = row{cells[2], cells[3]}
		}
	}
	for _, s := range envSwitches {
		r, ok := readme[s.name]
		if !ok {
			t.Errorf("README's table lacks graph's %s", s.name)
			continue
		}
		delete(readme, s.name)
		if r.def != s.def || r.meaning != s.meaning {
			t.Errorf("%s: README has default %q, meaning %q; graph/env.go has %q, %q", s.name, r.def, r.meaning, s.def, s.meaning)
		}
	}
	for name := range readme {
		t.Errorf("README's table lists %s as graph's, but graph/env.go has no such switch", name)
	}
}

// TestEnvReadOnlyInEnvGo keeps the package's reads of the environment in env.go's table.
func TestEnvReadOnlyInEnvGo(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if name == "env.go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" {
					switch sel.Sel.Name {
					case "Getenv", "LookupEnv", "Environ":
						t.Errorf("%s: os.%s outside env.go; add the variable to envSwitches", fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
}

// TestSIMDSwitch checks that HYPERFLAT_SIMD=avx2 takes the AVX-512 kernel out and that the
// products keep their bits (graph/internal/sgemm's tests compare both walks with a scalar
// model; this is the switch's wiring).
func TestSIMDSwitch(t *testing.T) {
	if !kern.HasAVX512 {
		t.Skip("this CPU lacks AVX512F: HYPERFLAT_SIMD=avx2 changes nothing here")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	m, n, k := 40, 150, 300
	a, b := normals(rng, m*k), normals(rng, k*n)
	c512 := make([]float32, m*n)
	setSwitch(t, "HYPERFLAT_SIMD", "")
	if ext, _ := Kernels(); ext != "avx512" {
		t.Fatalf("Kernels() = %q with the switch unset, want avx512", ext)
	}
	sgemm(false, false, m, n, k, a, k, b, n, 0, c512, n)
	t.Run("avx2", func(t *testing.T) {
		setSwitch(t, "HYPERFLAT_SIMD", "avx2")
		if ext, _ := Kernels(); ext != "avx2+fma" {
			t.Fatalf("Kernels() = %q under HYPERFLAT_SIMD=avx2", ext)
		}
		c2 := make([]float32, m*n)
		sgemm(false, false, m, n, k, a, k, b, n, 0, c2, n)
		for i := range c2 {
			if math.Float32bits(c2[i]) != math.Float32bits(c512[i]) {
				t.Fatalf("element %d: %v on AVX2, %v on AVX-512", i, c2[i], c512[i])
			}
		}
	})
	if ext, _ := Kernels(); ext != "avx512" {
		t.Errorf("Kernels() = %q after the subtest restored the switch", ext)
	}
	s, err := lookupSwitch("HYPERFLAT_SIMD")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.apply("avx512"); err == nil {
		t.Error("HYPERFLAT_SIMD=avx512 accepted; the only value is avx2")
	}
	if ext, _ := Kernels(); ext != "avx512" {
		t.Errorf("a refused value changed the kernels to %q", ext)
	}
}
