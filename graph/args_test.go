package graph

import (
	"context"
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Issue 52: Grad with respect to a node of another graph returned a zero gradient without
// error (while Add across graphs errors), and non-finite constants were accepted.
func TestForeignGraphsAndNonFiniteSettingsAreErrors(t *testing.T) {
	g1, g2 := G.NewGraph(), G.NewGraph()
	x := G.NewScalar(g1, tensor.Float64, G.WithName("x"), G.WithValue(2.0))
	y := G.NewScalar(g2, tensor.Float64, G.WithName("y"), G.WithValue(3.0))
	cost, err := Square(x)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Grad(cost, y); err == nil || !strings.Contains(err.Error(), "another graph") {
		t.Errorf("Grad(cost, node of another graph): %v, want an error naming the other graph", err)
	}
	if _, err := HVP(cost, []*G.Node{x}, []*G.Node{y}); err == nil {
		t.Error("HVP with a direction of another graph: no error")
	}
	if _, err := Dot([]*G.Node{nil}, []*G.Node{x}); err == nil {
		t.Error("Dot of a nil node: no error")
	}
	for name, f := range map[string]func() (*G.Node, error){
		"Scale(NaN)":     func() (*G.Node, error) { return Scale(x, math.NaN()) },
		"Affine(0, Inf)": func() (*G.Node, error) { return Affine(x, 1, math.Inf(1)) },
		"Dropout(NaN)":   func() (*G.Node, error) { return Dropout(x, x, math.NaN()) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Issue 52 (class 8): every exported function of the package returns an error, not a panic,
// for a nil node, tensor, value, function, random source or Program, and the checks refuse a
// node of another graph.
func TestNilArgumentsAreErrorsNotPanics(t *testing.T) {
	g1, g2 := G.NewGraph(), G.NewGraph()
	x := G.NewMatrix(g1, tensor.Float64, G.WithShape(2, 2), G.WithName("x"), G.WithInit(G.Ones()))
	y := G.NewMatrix(g2, tensor.Float64, G.WithShape(2, 2), G.WithName("y"), G.WithInit(G.Ones()))
	sum, err := Sum(x)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Compile(sum)
	if err != nil {
		t.Fatal(err)
	}
	var nilProg *Program
	var nilNode *G.Node
	geo := Geometry{StrideH: 1, StrideW: 1}
	cases := map[string]func() error{
		"BroadcastTo(nil)": func() error { _, err := BroadcastTo(nilNode, 2, 2); return err },
		"DropoutMask(nil rng)": func() error {
			_, err := DropoutMask(nil, tensor.Float64, 0.5, 2)
			return err
		},
		"GradCheck(nil f)": func() error { _, err := GradCheck(nil, nil, CheckOptions{}); return err },
		"GradCheck(nil input)": func() error {
			_, err := GradCheck(func([]*G.Node) (*G.Node, error) { return nil, nil }, []*tensor.Dense{nil}, CheckOptions{})
			return err
		},
		"GradCheckNodes(nil)":          func() error { _, err := GradCheckNodes(nilNode, []*G.Node{x}, CheckOptions{}); return err },
		"GradGradCheckNodes(nil)":      func() error { _, err := GradGradCheckNodes(nilNode, []*G.Node{x}, CheckOptions{}); return err },
		"GradCheckNodes(foreign)":      func() error { _, err := GradCheckNodes(sum, []*G.Node{y}, CheckOptions{}); return err },
		"GradCheckNodes(nil wrt)":      func() error { _, err := GradCheckNodes(sum, []*G.Node{nilNode}, CheckOptions{}); return err },
		"CheckOps(empty case)":         func() error { _, err := CheckOps(context.Background(), []OpCase{{}}, CheckOptions{}); return err },
		"SetFlat(nil tensor)":          func() error { return SetFlat([]*tensor.Dense{nil}, []float64{1}) },
		"ToFloat64s(nil)":              func() error { _, err := ToFloat64s(nil); return err },
		"nil Program.Run":              func() error { return nilProg.Run(context.Background()) },
		"nil Program.Let":              func() error { return nilProg.Let(x, 1.0) },
		"nil Program.Value":            func() error { _, err := nilProg.Value(x); return err },
		"nil Program.Flatten":          func() error { _, err := nilProg.Flatten(x); return err },
		"nil Program.SetReadOnly":      func() error { return nilProg.SetReadOnly(x, true) },
		"nil Program.NonzerosAt":       func() error { return nilProg.NonzerosAt(x, nil) },
		"Program.Value(nil)":           func() error { _, err := prog.Value(nilNode); return err },
		"Program.Scalar(nil)":          func() error { _, err := prog.Scalar(nilNode); return err },
		"Program.SetReadOnly(nil)":     func() error { return prog.SetReadOnly(nilNode, true) },
		"Program.NonzerosAt(nil)":      func() error { return prog.NonzerosAt(nilNode, nil) },
		"Program.Let(nil)":             func() error { return prog.Let(nilNode, 1.0) },
		"Program.Value(foreign)":       func() error { _, err := prog.Value(y); return err },
		"MaxPool2d(nil)":               func() error { _, err := MaxPool2d(nilNode, 1, 1, geo); return err },
		"Concat(nil)":                  func() error { _, err := Concat(0, nilNode, x); return err },
		"Concat(foreign)":              func() error { _, err := Concat(0, y, x); return err },
		"MatMul(foreign)":              func() error { _, err := MatMul(x, y); return err },
		"CrossEntropy(nil)":            func() error { _, err := CrossEntropy(x, nilNode); return err },
		"BatchNorm(nil γ)":             func() error { _, _, _, err := BatchNorm(x, nilNode, x, BatchNormConfig{}); return err },
		"MixedVJP(nil hyper)":          func() error { _, err := MixedVJP(sum, []*G.Node{x}, []*G.Node{x}, []*G.Node{nilNode}); return err },
		"VJP(nil output)":              func() error { _, err := VJP([]*G.Node{nilNode}, []*G.Node{x}, x); return err },
		"HVP(nil direction)":           func() error { _, err := HVP(sum, []*G.Node{x}, []*G.Node{nilNode}); return err },
		"Grad(nil cost)":               func() error { _, err := Grad(nilNode, x); return err },
		"Program.Value(not its input)": func() error { _, err := prog.Value(G.NewScalar(g1, tensor.Float64, G.WithName("z"))); return err },
	}
	for name, f := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			if err := f(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}()
	}
	// The methods without an error report nothing for a nil Program.
	if nilProg.Finite(x) || nilProg.DeferProduct(x, true) || nilProg.LiveBytes() != 0 || nilProg.Flops() != 0 || nilProg.OpTimes() != nil {
		t.Error("a nil Program reports something")
	}
	nilProg.Profile(true)
}
