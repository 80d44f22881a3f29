package hypergrad

import (
	"fmt"
	"strings"

	G "gorgonia.org/gorgonia"
)

// rebindHint is the fix for an objective built on the model's own parameter nodes.
const rebindHint = "build it at the theta nodes it is given, not at the model's own parameter nodes " +
	"(with a layers.Net, wrap the forward pass in net.Rebind(theta, func() error { … }))"

// checkAtTheta fails when obj, the objective what built at the computed parameters theta
// (an unrolled optimizer step), reads the problem's own parameter nodes instead, or does not
// depend on theta at all: its hypergradient through the inner steps would be silently 0.
// Where theta are the parameter nodes themselves there is nothing to tell apart.
func checkAtTheta(p *Problem, obj *G.Node, theta []*G.Node, what string) error {
	computed := map[*G.Node]bool{}
	for i, n := range theta {
		if n != p.Params[i] {
			computed[n] = true
		}
	}
	if len(computed) == 0 {
		return nil
	}
	own := map[*G.Node]bool{}
	for _, n := range p.Params {
		own[n] = true
	}
	var direct []string
	reached := false
	// The walk stops at theta, below which the parameters legitimately appear (θ − η∇L).
	walk(obj, func(n *G.Node) bool {
		switch {
		case computed[n]:
			reached = true
			return false
		case own[n]:
			direct = append(direct, n.Name())
		}
		return true
	})
	switch {
	case len(direct) > 0:
		return fmt.Errorf("hypergrad: %s reads the parameter node(s) %s itself instead of the theta it is given, so its hypergradient would miss every inner step (dC/dλ silently 0): %s",
			what, strings.Join(direct, ", "), rebindHint)
	case !reached:
		return fmt.Errorf("hypergrad: %s does not depend on the theta it is given, so its hypergradient would be silently 0: %s", what, rebindHint)
	}
	return nil
}

// checkDependsOnHypers fails when some hyperparameter node reaches none of objs: its
// hypergradient would be identically 0, whatever the data. The test is structural (a path in
// the graph), so it never refuses a problem whose hypergradient could be nonzero.
func checkDependsOnHypers(p *Problem, what string, objs ...*G.Node) error {
	hyper := map[*G.Node]bool{}
	for _, h := range p.Hypers {
		hyper[h] = true
	}
	seen := map[*G.Node]bool{}
	for _, o := range objs {
		walk(o, func(n *G.Node) bool {
			if hyper[n] {
				seen[n] = true
			}
			return true
		})
	}
	for _, h := range p.Hypers {
		if !seen[h] {
			return fmt.Errorf("hypergrad: the hyperparameter %s reaches none of %s, so its hypergradient would be silently 0: "+
				"use the Hypers nodes in Train or Val, and %s", h.Name(), what, rebindHint)
		}
	}
	return nil
}

// walk visits every node obj is computed from, obj included, each once; visit returns
// whether to go on below a node.
func walk(obj *G.Node, visit func(*G.Node) bool) {
	if obj == nil {
		return
	}
	seen := map[*G.Node]bool{obj: true}
	stack := []*G.Node{obj}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !visit(n) {
			continue
		}
		it := n.Graph().From(n.ID())
		if it == nil {
			continue
		}
		for it.Next() {
			c := it.Node().(*G.Node)
			if !seen[c] {
				seen[c] = true
				stack = append(stack, c)
			}
		}
	}
}
