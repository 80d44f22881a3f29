package hypergrad

import (
	"context"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Issue 16 item 2: a problem whose Val ignored the theta it was given (reading the model's
// own parameter nodes) gave dC/dλ = 0 with no error.
func TestObjectiveIgnoringThetaIsRefused(t *testing.T) {
	t.Run("ridge", func(t *testing.T) {
		r := newRidge(t, 1, false, 0.3)
		good := r.problem
		ignoring := *good
		ignoring.Val = func([]*G.Node) (*G.Node, error) { return good.Val([]*G.Node{r.thetaN}) }
		for _, k := range []int{1, 3} {
			if _, err := NewUnrolled(&ignoring, k, 0.1); err == nil || !strings.Contains(err.Error(), "Val reads the parameter node(s) theta itself") ||
				!strings.Contains(err.Error(), "Rebind") {
				t.Errorf("K=%d, Val at the model's own θ: %v, want an error naming Rebind", k, err)
			}
		}
		// K = 0 evaluates at θ itself, where the two cannot differ.
		if _, err := NewUnrolled(&ignoring, 0, 0.1); err != nil {
			t.Errorf("K=0: %v", err)
		}
		trainIgnoring := *good
		trainIgnoring.Train = func(_ []*G.Node, k int) (*G.Node, error) { return good.Train([]*G.Node{r.thetaN}, k) }
		if _, err := NewUnrolled(&trainIgnoring, 3, 0.1); err == nil || !strings.Contains(err.Error(), "Train (inner step 1) reads the parameter node(s) theta itself") {
			t.Errorf("K=3, Train at the model's own θ: %v", err)
		}
		constant := *good
		constant.Val = func([]*G.Node) (*G.Node, error) {
			return graph.Scale(r.lamN, 0) // depends on neither θ nor data
		}
		if _, err := NewUnrolled(&constant, 1, 0.1); err == nil || !strings.Contains(err.Error(), "does not depend on the theta") {
			t.Errorf("Val independent of θ: %v", err)
		}
		// A second hyperparameter that nothing uses would always get a zero hypergradient.
		unused := *good
		extra := G.NewTensor(r.lamN.Graph(), tensor.Float64, 1, G.WithShape(1), G.WithName("unused"), G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{1}))))
		unused.Hypers = []*G.Node{r.lamN, extra}
		if _, err := NewUnrolled(&unused, 1, 0.1); err == nil || !strings.Contains(err.Error(), "hyperparameter unused reaches none of") {
			t.Errorf("unused hyperparameter, unrolled: %v", err)
		}
		if _, err := NewImplicit(&unused, CG, 10); err == nil || !strings.Contains(err.Error(), "hyperparameter unused reaches none of") {
			t.Errorf("unused hyperparameter, implicit: %v", err)
		}
		// Through Bilevel, the error stops the run before any step.
		b := &Bilevel{
			Chains: []*Chain{{Problem: &ignoring, Inner: samplers.NewAdam(0.05)}},
			Lambda: []*tensor.Dense{r.lambda}, Outer: samplers.NewAdam(0.05),
			InnerSteps: 2, HyperSteps: 2, RiskLR: 0.1,
		}
		if h, err := b.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Rebind") || len(h) != 0 {
			t.Errorf("Bilevel with Val at the model's own θ: %d steps, %v", len(h), err)
		}
		if _, err := NewUnrolled(good, 3, 0.1); err != nil {
			t.Errorf("the correct problem: %v", err)
		}
	})
	t.Run("layers", func(t *testing.T) {
		val, problem := mlpProblem(t)
		withoutRebind := *problem
		withoutRebind.Val = func([]*G.Node) (*G.Node, error) { return val() }
		if _, err := NewT1T2(&withoutRebind, 0.1); err == nil || !strings.Contains(err.Error(), "net.Rebind(theta") {
			t.Errorf("Val without Rebind: %v", err)
		}
		u, err := NewT1T2(problem, 0.1)
		if err != nil {
			t.Fatalf("Val with Rebind: %v", err)
		}
		e, err := u.Estimate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if nonzero := func() bool {
			for _, g := range e.Grad {
				for _, x := range g {
					if x != 0 {
						return true
					}
				}
			}
			return false
		}(); !nonzero {
			t.Errorf("hypergradient with Rebind is 0: %v", e.Grad)
		}
	})
}

// mlpProblem is a weight-decay problem on a small layers model, its Train and Val built with
// Net.Rebind as they should be; val builds the validation loss at the net's own parameters.
func mlpProblem(t *testing.T) (func() (*G.Node, error), *Problem) {
	t.Helper()
	net, err := layers.NewNet(tensor.Float64, 7)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.NewLinearClassifier(net, 4, 3, layers.LinearConfig{})
	if err != nil {
		t.Fatal(err)
	}
	wd, err := layers.NewWeightDecay(net, nil, layers.PerTensor, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	in := func(name string, r, c int, f func(i, j int) float64) *G.Node {
		v := make([]float64, r*c)
		for i := range r {
			for j := range c {
				v[i*c+j] = f(i, j)
			}
		}
		return G.NewTensor(net.Graph(), tensor.Float64, 2, G.WithShape(r, c), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(v))))
	}
	x := func(name string, s float64) *G.Node {
		return in(name, 6, 4, func(i, j int) float64 { return s * float64((i*7+j*3)%5-2) })
	}
	y := func(name string, shift int) *G.Node {
		return in(name, 6, 3, func(i, j int) float64 { return float64(b2f((i+shift)%3 == j)) })
	}
	xT, yT, xV, yV := x("xT", 1), y("yT", 0), x("xV", 0.7), y("yV", 1)
	ce := func(x, y *G.Node) (*G.Node, error) {
		logits, err := m.Logits(x, layers.NewPass(layers.Train))
		if err != nil {
			return nil, err
		}
		return losses.CrossEntropy(logits, y)
	}
	at := func(theta []*G.Node, x, y *G.Node) (*G.Node, error) {
		var out *G.Node
		err := net.Rebind(theta, func() (err error) {
			out, err = ce(x, y)
			return err
		})
		return out, err
	}
	p := &Problem{
		Params: net.ParamNodes(),
		Hypers: wd.Nodes(),
		Train: func(theta []*G.Node, _ int) (*G.Node, error) {
			l, err := at(theta, xT, yT)
			if err != nil {
				return nil, err
			}
			pen, err := wd.PenaltyAt(theta)
			if err != nil {
				return nil, err
			}
			return graph.Add(l, pen)
		},
		Val: func(theta []*G.Node) (*G.Node, error) { return at(theta, xV, yV) },
	}
	return func() (*G.Node, error) { return ce(xV, yV) }, p
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
