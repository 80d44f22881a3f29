package train

import (
	"context"
	"fmt"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	G "gorgonia.org/gorgonia"
)

// Inputs binds the inputs of a whole dataset, one batch of d.N rows of d.Shape, to a new
// input node of net, for a graph built on fixed data (a validation loss to differentiate,
// say); Trainer binds its own batches.
func Inputs(net *layers.Net, d *datasets.Dataset, name string) (*G.Node, error) {
	if net == nil || d == nil {
		return nil, fmt.Errorf("train: Inputs needs a net and a dataset (got a nil one)")
	}
	shape := append([]int{d.N}, d.Shape...)
	x := net.Input(name+".x", shape...)
	return x, G.Let(x, layers.NewTensor(net.Dtype(), d.X, shape...))
}

// OneHot binds labels as one-hot rows of width k to a new input node of net: the target of
// losses.CrossEntropy.
func OneHot(net *layers.Net, labels []int, k int, name string) (*G.Node, error) {
	if net == nil {
		return nil, fmt.Errorf("train: OneHot needs a net (got nil)")
	}
	oh, err := datasets.OneHot(labels, k)
	if err != nil {
		return nil, err
	}
	y := net.Input(name, len(labels), k)
	return y, G.Let(y, layers.NewTensor(net.Dtype(), oh, len(labels), k))
}

// Bind binds a dataset's inputs and one-hot targets (classes wide; 0 means len(d.Classes))
// to new input nodes of net, named NAME.x and NAME.y.
func Bind(net *layers.Net, d *datasets.Dataset, classes int, name string) (x, y *G.Node, err error) {
	if net == nil || d == nil {
		return nil, nil, fmt.Errorf("train: Bind needs a net and a dataset (got a nil one)")
	}
	if classes == 0 {
		classes = len(d.Classes)
	}
	if x, err = Inputs(net, d, name); err != nil {
		return nil, nil, err
	}
	y, err = OneHot(net, d.Y, classes, name+".y")
	return x, y, err
}

// Evaluator computes a model's accuracy and mean cross-entropy on a fixed dataset, in
// inference mode. Unlike Trainer.Evaluate, it compiles its programs once, with the data
// bound, so that evaluating after every step of a loop costs only the forward passes.
type Evaluator struct {
	batches []evalBatch
	labels  []int
}

type evalBatch struct {
	prog         *graph.Program
	logits, loss *G.Node
	rows         []int
}

// NewEvaluator prepares the evaluation of m on d in batches of batch rows (all at once
// when 0), with classes outputs (0: len(d.Classes)). The programs read m's parameters, so
// an Evaluate after training sees the trained weights.
func NewEvaluator(m layers.Model, d *datasets.Dataset, classes, batch int) (*Evaluator, error) {
	return NewEvaluatorMode(m, d, classes, batch, layers.Eval)
}

// NewEvaluatorMode is NewEvaluator with the forward passes in mode. layers.Train evaluates as
// PyTorch code that never calls model.eval() does: batch-norm normalizes each batch by its own
// statistics (so the batch size is part of the result) and its running averages are neither
// read nor updated. A model with dropout is refused in training mode: its masks would have to
// be drawn, and an accuracy would be random.
func NewEvaluatorMode(m layers.Model, d *datasets.Dataset, classes, batch int, mode layers.Mode) (*Evaluator, error) {
	if m == nil {
		return nil, fmt.Errorf("train: evaluator of a nil model")
	}
	if mode != layers.Eval && mode != layers.Train {
		return nil, fmt.Errorf("train: evaluator mode %d", mode)
	}
	if d == nil || d.N == 0 {
		return nil, fmt.Errorf("train: evaluator on an empty dataset")
	}
	if m == nil || m.Net() == nil {
		return nil, errNilModel
	}
	if classes == 0 {
		classes = len(d.Classes)
	}
	if batch <= 0 || batch > d.N {
		batch = d.N
	}
	e := &Evaluator{labels: d.Y}
	for start := 0; start < d.N; start += batch {
		idx := make([]int, min(start+batch, d.N)-start)
		for i := range idx {
			idx[i] = start + i
		}
		b, err := newEvalBatch(m, d.Subset(idx), classes, mode)
		if err != nil {
			return nil, err
		}
		b.rows = idx
		e.batches = append(e.batches, b)
	}
	return e, nil
}

func newEvalBatch(m layers.Model, sub *datasets.Dataset, classes int, mode layers.Mode) (evalBatch, error) {
	x, y, err := Bind(m.Net(), sub, classes, "eval")
	if err != nil {
		return evalBatch{}, err
	}
	pass := layers.NewPass(mode)
	logits, err := m.Logits(x, pass)
	if err != nil {
		return evalBatch{}, err
	}
	if pass.Dropout() {
		return evalBatch{}, fmt.Errorf("train: a training-mode evaluation of a model with dropout")
	}
	loss, err := losses.CrossEntropy(logits, y)
	if err != nil {
		return evalBatch{}, err
	}
	p, err := graph.Compile(logits, loss)
	return evalBatch{prog: p, logits: logits, loss: loss}, err
}

// Evaluate returns the accuracy and the mean cross-entropy over the dataset.
func (e *Evaluator) Evaluate(ctx context.Context) (accuracy, loss float64, err error) {
	if e == nil {
		return 0, 0, fmt.Errorf("train: a nil Evaluator (make one with NewEvaluator)")
	}
	correct, total := 0, 0
	for _, b := range e.batches {
		if err := b.prog.Run(ctx); err != nil {
			return 0, 0, err
		}
		l, err := b.prog.Scalar(b.loss)
		if err != nil {
			return 0, 0, err
		}
		logits, err := b.prog.Float64s(b.logits)
		if err != nil {
			return 0, 0, err
		}
		n := len(b.rows)
		for r, pred := range (losses.Scores{Values: logits, N: n, K: len(logits) / n}).Predict(0) {
			if pred == e.labels[b.rows[r]] {
				correct++
			}
		}
		loss += l * float64(n)
		total += n
	}
	return float64(correct) / float64(total), loss / float64(total), nil
}
