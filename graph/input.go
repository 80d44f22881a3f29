package graph

import (
	"fmt"
	"strconv"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NewInput adds a new input node to g, bound to value (its dtype and shape are value's), and
// returns it. Unlike gorgonia.NewTensor it never returns a node that already exists.
//
// gorgonia hash-conses input nodes by name, type and shape: a second NewTensor with the name
// of an existing input returns that input, still bound to the first value, and drops the
// value it was given. Whoever then writes into the dropped value changes nothing, and every
// program computed from the node reads the first owner's value — two Hessian-vector products
// built on one loss with equally named direction nodes silently share one direction. So
// NewInput names the node name, or name#2, name#3, … when name is taken in g, and checks that
// the node it got is bound to value; it is an error if not.
func NewInput(g *G.ExprGraph, name string, value *tensor.Dense) (n *G.Node, err error) {
	if g == nil || value == nil {
		return nil, fmt.Errorf("graph: NewInput %q on a nil graph or with a nil value", name)
	}
	s := value.Shape()
	unique := name
	for k := 2; len(g.ByName(unique)) > 0; k++ {
		unique = name + "#" + strconv.Itoa(k)
	}
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("graph: NewInput %q: %v", unique, r)
		}
	}()
	n = G.NewTensor(g, value.Dtype(), len(s), G.WithShape(s.Clone()...), G.WithName(unique), G.WithValue(value))
	if v, ok := n.Value().(*tensor.Dense); !ok || v != value || n.Op() != nil {
		return nil, fmt.Errorf("graph: NewInput %q: gorgonia returned the existing node %s instead of a new input", unique, n.Name())
	}
	return n, nil
}
