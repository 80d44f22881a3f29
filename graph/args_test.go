package graph

import (
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
