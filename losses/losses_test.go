package losses

import (
	"context"
	"math"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func close(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestROCAUC(t *testing.T) {
	// scikit-learn's documentation example: roc_auc_score([0,0,1,1], [0.1,0.4,0.35,0.8]) = 0.75.
	if auc, err := ROCAUC([]float64{0.1, 0.4, 0.35, 0.8}, []int{0, 0, 1, 1}); err != nil || !close(auc, 0.75, 1e-15) {
		t.Errorf("auc %v, err %v; want 0.75", auc, err)
	}
	// A tie between a positive and a negative counts one half: pairs (p,n) = (0.5,0.5) tie,
	// (0.5,0.2) win, (0.9,0.5) win, (0.9,0.2) win → 3.5/4.
	if auc, _ := ROCAUC([]float64{0.5, 0.2, 0.5, 0.9}, []int{0, 0, 1, 1}); !close(auc, 0.875, 1e-15) {
		t.Errorf("auc with a tie %v, want 0.875", auc)
	}
	if _, err := ROCAUC([]float64{1, 2}, []int{1, 1}); err == nil {
		t.Error("AUC of one class should fail")
	}
}

func TestROCAUCOvRMacro(t *testing.T) {
	// Three classes; per-class AUCs by hand: class 0 scores (.8,.1,.3 | labels 0,1,2) → 1;
	// class 1 scores (.1,.7,.3) → 1; class 2 scores (.1,.2,.4) → 1; perfect ranking: macro 1.
	s := Scores{Values: []float64{.8, .1, .1, .1, .7, .2, .3, .3, .4}, N: 3, K: 3}
	if auc, err := ROCAUCOvR(s, []int{0, 1, 2}); err != nil || !close(auc, 1, 1e-15) {
		t.Errorf("auc %v err %v", auc, err)
	}
	// Rows [.8 .1 .1], [.1 .7 .2], [.3 .5 .2] with labels 0, 1, 2. Class 0 scores .8 | .1 .3 → 1;
	// class 1 scores .7 | .1 .5 → 1; class 2 scores .2 | .1 .2 → one win, one tie → 0.75.
	// Macro: 2.75/3.
	s = Scores{Values: []float64{.8, .1, .1, .1, .7, .2, .3, .5, .2}, N: 3, K: 3}
	if auc, _ := ROCAUCOvR(s, []int{0, 1, 2}); !close(auc, 2.75/3, 1e-15) {
		t.Errorf("macro auc %v, want %v", auc, 2.75/3)
	}
}

func TestLogLossAndAccuracy(t *testing.T) {
	// scikit-learn's documentation example: log_loss(["spam","ham","ham","spam"],
	// [[.1,.9],[.9,.1],[.8,.2],[.35,.65]]) = 0.21616…; ham = 0, spam = 1.
	p := Scores{Values: []float64{.1, .9, .9, .1, .8, .2, .35, .65}, N: 4, K: 2}
	labels := []int{1, 0, 0, 1}
	want := -(math.Log(.9) + math.Log(.9) + math.Log(.8) + math.Log(.65)) / 4
	if ll, err := LogLoss(p, labels, 0); err != nil || !close(ll, want, 1e-15) || !close(ll, 0.21616187, 1e-8) {
		t.Errorf("log loss %v, want %v", ll, want)
	}
	if acc, _ := Accuracy(p, []int{1, 0, 1, 1}, 0); acc != 0.75 {
		t.Errorf("accuracy %v, want 0.75", acc)
	}
	bin := Scores{Values: []float64{-1, 2, 0.5}, N: 3, K: 1}
	if acc, _ := Accuracy(bin, []int{0, 1, 0}, 0); !close(acc, 2.0/3, 1e-15) {
		t.Errorf("binary accuracy %v", acc)
	}
	if _, err := Accuracy(p, []int{1, 0}, 0); err == nil {
		t.Error("label count mismatch accepted")
	}
}

func node(g *G.ExprGraph, name string, shape []int, data []float64) *G.Node {
	return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))))
}

func TestRiskValues(t *testing.T) {
	g := G.NewGraph()
	z := node(g, "z", []int{3}, []float64{0.5, -2, 3})
	y := node(g, "y", []int{3}, []float64{1, 0, 1})
	bce, err := BinaryCrossEntropy(z, y)
	if err != nil {
		t.Fatal(err)
	}
	mse, err := MSE(z, y)
	if err != nil {
		t.Fatal(err)
	}
	p, err := graph.Compile(bce, mse)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	wantBCE := -(math.Log(sig(0.5)) + math.Log(1-sig(-2)) + math.Log(sig(3))) / 3
	if got, _ := p.Scalar(bce); !close(got, wantBCE, 1e-15) {
		t.Errorf("BCE %v, want %v", got, wantBCE)
	}
	if got, _ := p.Scalar(mse); !close(got, (0.25+4+4)/3, 1e-15) {
		t.Errorf("MSE %v", got)
	}
}

func TestRisksFirstAndSecondOrder(t *testing.T) {
	for _, kind := range []Kind{Binary, Squared, Multiclass} {
		g := G.NewGraph()
		z := node(g, "z", []int{3, 2}, []float64{0.5, -2, 3, 0.1, -0.7, 1.2})
		y := node(g, "y", []int{3, 2}, []float64{1, 0, 0, 1, 1, 0})
		r, err := Risk(kind, z, y)
		if err != nil {
			t.Fatal(err)
		}
		for _, check := range []func(*G.Node, []*G.Node, graph.CheckOptions) (graph.CheckResult, error){graph.GradCheckNodes, graph.GradGradCheckNodes} {
			res, err := check(r, []*G.Node{z}, graph.CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed {
				t.Errorf("%s: %v", kind, res)
			}
		}
	}
}

// Issue 52 (class 8): a NaN threshold (every row predicted class 0) and a NaN or out-of-range
// ε (a NaN loss) were accepted with a nil error.
func TestNonFiniteSettingsAreErrors(t *testing.T) {
	binary := Scores{Values: []float64{0.3, 0.8}, N: 2, K: 1}
	if _, err := Accuracy(binary, []int{0, 1}, math.NaN()); err == nil {
		t.Error("Accuracy at a NaN threshold: no error")
	}
	for _, eps := range []float64{math.NaN(), -1e-3, 0.5, math.Inf(1)} {
		if _, err := LogLoss(binary, []int{0, 1}, eps); err == nil {
			t.Errorf("LogLoss with ε = %v: no error", eps)
		}
	}
	if v, err := LogLoss(binary, []int{0, 1}, 0); err != nil || math.IsNaN(v) {
		t.Errorf("LogLoss with the default ε: %v, %v", v, err)
	}
}
