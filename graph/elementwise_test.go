package graph

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// buildCase builds case c on a new graph with float64 inputs and returns its output and the
// inputs it differentiates.
func buildCase(t *testing.T, c OpCase) (*G.Node, []*G.Node) {
	t.Helper()
	g := G.NewGraph()
	var nodes []*G.Node
	for i, in := range c.Inputs(rand.New(rand.NewPCG(1, 2))) {
		name := "in" + string(rune('0'+i))
		if len(in.Shape()) == 0 {
			nodes = append(nodes, G.NewScalar(g, tensor.Float64, G.WithName(name), G.WithValue(G.NewF64(in.Float64s()[0]))))
			continue
		}
		nodes = append(nodes, G.NewTensor(g, tensor.Float64, len(in.Shape()), G.WithShape(in.Shape()...), G.WithName(name), G.WithValue(in)))
	}
	y, err := c.F(nodes)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	wrt := nodes
	if c.Wrt != nil {
		wrt = nil
		for _, i := range c.Wrt {
			wrt = append(wrt, nodes[i])
		}
	}
	return y, wrt
}

// TestElementwiseTablesAreComplete requires every declared unary and binary kind to have, for
// both element types, a name, a forward kernel, a VJP and a check case that builds that very
// op, and package doc to list the exported ones.
func TestElementwiseTablesAreComplete(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, ops, _ := strings.Cut(string(doc), "// # Ops")
	ops, _, _ = strings.Cut(ops, "// #")
	names := map[string]bool{}
	// builds reports whether case c's forward graph has an op for which is reports true.
	builds := func(c OpCase, is func(G.Op) bool) bool {
		y, _ := buildCase(t, c)
		for _, n := range topoSort([]*G.Node{y}) {
			if op := n.Op(); op != nil && is(op) {
				return true
			}
		}
		return false
	}
	entry := func(kind, name, name32 string, fwd, fwd32, vjp bool, checks []OpCase, internal bool, is func(G.Op) bool) {
		switch {
		case name == "":
			t.Errorf("%s has no table entry", kind)
			return
		case names[name]:
			t.Errorf("%s: a second op named %s", kind, name)
		case name32 != name:
			t.Errorf("%s: named %q for float64, %q for float32", kind, name, name32)
		case !fwd || !fwd32:
			t.Errorf("%s: no forward kernel for float64 (%v) or float32 (%v)", name, fwd, fwd32)
		case !vjp:
			t.Errorf("%s: no VJP", name)
		case len(checks) == 0:
			t.Errorf("%s: no check case", name)
		}
		names[name] = true
		for _, c := range checks {
			if !builds(c, is) {
				t.Errorf("%s: check case %q does not build the op", name, c.Name)
			}
		}
		if !internal && !regexp.MustCompile(`\b`+name+`\b`).MatchString(ops) {
			t.Errorf("%s: doc.go's Ops section does not list it", name)
		}
	}
	for k := range numUnary {
		d, d32 := &unaryF64[k], &unaryF32[k]
		entry(k.String(), d.name, d32.name, d.fwd != nil, d32.fwd != nil, d.vjp != nil, d.checks, d.internal, func(op G.Op) bool {
			u, ok := op.(*unaryOp)
			return ok && u.kind == k
		})
	}
	for k := range numBinary {
		d, d32 := &binaryF64[k], &binaryF32[k]
		entry(k.String(), d.name, d32.name, d.row != nil, d32.row != nil, d.vjp != nil, d.checks, false, func(op G.Op) bool {
			b, ok := op.(*binaryOp)
			return ok && b.kind == k
		})
	}
}

// TestEveryOpTypeIsChecked requires every op type of the package with a VJP to appear in the
// graph of some case of OpCases, forward or in its first or second derivatives, so that
// "hyperflat check" exercises it.
func TestEveryOpTypeIsChecked(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "VJP" {
				continue
			}
			typ := fn.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				declared[id.Name] = true
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("found no VJP methods")
	}
	seen := map[string]bool{}
	for _, c := range OpCases() {
		y, wrt := buildCase(t, c)
		sq, err := Square(y)
		if err != nil {
			t.Fatal(err)
		}
		cost, err := Sum(sq)
		if err != nil {
			t.Fatal(err)
		}
		gs, err := Grad(cost, wrt...)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		norm, err := SquaredNorm(gs...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Grad(norm, wrt...); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, n := range y.Graph().AllNodes() {
			if op := n.Op(); op != nil {
				seen[opTypeName(op)] = true
			}
		}
	}
	for name := range declared {
		if !seen[name] {
			t.Errorf("op type %s has a VJP but no case of OpCases builds it", name)
		}
	}
}

// TestUnknownOpKindIsAnError runs and differentiates ops whose kind has no table entry — one
// past the tables, and Exp with its entries removed after the graph was built, as if a case
// had been forgotten — and requires errors naming the op, on the plain and the fused path.
func TestUnknownOpKindIsAnError(t *testing.T) {
	bogusUnary := func(x *G.Node) (*G.Node, error) {
		return apply(&unaryOp{base: newBase("BogusUnary", "", x.Shape(), x), kind: numUnary}, x)
	}
	bogusBinary := func(x *G.Node) (*G.Node, error) {
		st := broadcastStrides(x.Shape(), x.Shape())
		op := &binaryOp{base: newBase("BogusBinary", "", x.Shape(), x, x), kind: numBinary, sameShapes: true, sa: st, sb: st}
		return apply(op, x, x)
	}
	forgetExp := func() (restore func()) {
		saved64, saved32 := unaryF64[kExp], unaryF32[kExp]
		unaryF64[kExp], unaryF32[kExp] = unaryDef[float64]{}, unaryDef[float32]{}
		return func() { unaryF64[kExp], unaryF32[kExp] = saved64, saved32 }
	}
	check := func(name string, build func(*G.Node) (*G.Node, error), forget bool, size int, dt tensor.Dtype) {
		g := G.NewGraph()
		x := G.NewVector(g, dt, G.WithShape(size), G.WithName("x"), G.WithInit(G.Ones()))
		y, err := build(must(Neg(x)))
		if err != nil {
			t.Fatal(err)
		}
		cost := must(Sum(must(Neg(y))))
		prog, err := Compile(cost)
		if err != nil {
			t.Fatal(err)
		}
		if forget {
			defer forgetExp()()
		}
		if err := prog.Run(context.Background()); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s, %d %v elements: Run err = %v; want an error naming the op", name, size, dt, err)
		}
		if _, err := Grad(cost, x); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s, %d %v elements: Grad err = %v; want an error naming the op", name, size, dt, err)
		}
	}
	for _, size := range []int{5, 2 * fuseMin} { // too small to fuse, and fused
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			check("BogusUnary", bogusUnary, false, size, dt)
			check("BogusBinary", bogusBinary, false, size, dt)
			check("Exp", Exp, true, size, dt)
		}
	}
}

// TestUnknownConstKindIsAnError: constOp's kinds are not in a table, and its Do must still
// refuse one it does not know.
func TestUnknownConstKindIsAnError(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"), G.WithInit(G.Ones()))
	y, err := apply(&constOp{base: newBase("BogusConst", "", x.Shape(), x), kind: constMax + 1}, x)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Compile(y)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "BogusConst") {
		t.Errorf("Run err = %v; want an error naming the op", err)
	}
}
