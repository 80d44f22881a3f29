package losses

import (
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
)

// CrossEntropy is the mean multiclass cross-entropy of N×K logits against N×K targets (one-hot
// rows or probability rows), computed through a stable log-softmax.
func CrossEntropy(logits, targets *G.Node) (*G.Node, error) {
	return graph.CrossEntropy(logits, targets)
}

// BinaryCrossEntropy is the mean of −[y log σ(z) + (1−y) log(1−σ(z))] over logits z and 0/1
// (or probability) targets y of the same shape (N or N×1), computed stably as
// softplus(z) − y·z.
func BinaryCrossEntropy(logits, targets *G.Node) (*G.Node, error) {
	if logits == nil || targets == nil {
		return nil, fmt.Errorf("losses: BinaryCrossEntropy of a nil node")
	}
	if !logits.Shape().Eq(targets.Shape()) {
		return nil, fmt.Errorf("losses: BinaryCrossEntropy of logits %v and targets %v", logits.Shape(), targets.Shape())
	}
	sp, err := graph.Softplus(logits)
	if err != nil {
		return nil, err
	}
	yz, err := graph.Mul(targets, logits)
	if err != nil {
		return nil, err
	}
	l, err := graph.Sub(sp, yz)
	if err != nil {
		return nil, err
	}
	return graph.Mean(l)
}

// MSE is the mean over all entries of (pred − target)².
func MSE(pred, target *G.Node) (*G.Node, error) {
	if pred == nil || target == nil {
		return nil, fmt.Errorf("losses: MSE of a nil node")
	}
	if !pred.Shape().Eq(target.Shape()) {
		return nil, fmt.Errorf("losses: MSE of predictions %v and targets %v", pred.Shape(), target.Shape())
	}
	d, err := graph.Sub(pred, target)
	if err != nil {
		return nil, err
	}
	sq, err := graph.Square(d)
	if err != nil {
		return nil, err
	}
	return graph.Mean(sq)
}

// Kind names a risk.
type Kind string

// Risks.
const (
	Multiclass Kind = "cross-entropy"
	Binary     Kind = "binary-cross-entropy"
	Squared    Kind = "mse"
)

// Risk builds the empirical risk of the given kind.
func Risk(kind Kind, outputs, targets *G.Node) (*G.Node, error) {
	switch kind {
	case Multiclass:
		return CrossEntropy(outputs, targets)
	case Binary:
		return BinaryCrossEntropy(outputs, targets)
	case Squared:
		return MSE(outputs, targets)
	}
	return nil, fmt.Errorf("losses: unknown risk %q", string(kind))
}
