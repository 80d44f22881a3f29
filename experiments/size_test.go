package experiments

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodeSize keeps the code readable: no Go file of the module over 800 lines, and no
// function of the experiments or the command over 100 (tests included; generated files and
// testdata are exempt).
func TestCodeSize(t *testing.T) {
	const maxFunc, maxFile = 100, 800
	sep := string(filepath.Separator)
	funcRoots := []string{filepath.Join("..", "experiments") + sep, filepath.Join("..", "cmd") + sep}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.Contains(path, sep+"testdata"+sep) {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(src, []byte("// Code generated")) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		if n := fset.Position(f.End()).Line; n > maxFile {
			t.Errorf("%s has %d lines, more than %d: split it by concern", path, n, maxFile)
		}
		if !strings.HasPrefix(path, funcRoots[0]) && !strings.HasPrefix(path, funcRoots[1]) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fd, ok := n.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				return true
			}
			if lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; lines > maxFunc {
				t.Errorf("%s: %s has %d lines, more than %d", path, fd.Name.Name, lines, maxFunc)
			}
			return false
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
