package convexity_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// The white-box record and the Eq. 7 selection rule on a user's task: random search over an
// MLP's width and learning rate on iris, every full training recorded (Task.Whitebox: the
// default probe counts, the regularizer summed over every iterate), and the configuration returned by the validation loss
// plus ζ times the Eq. 7 regularizer beside the one the validation objective picks.
func ExampleSelect() {
	iris, err := datasets.LoadEmbedded("iris")
	if err != nil {
		panic(err)
	}
	parts, err := datasets.Split(iris, rand.New(rand.NewPCG(1, 1)), 0.6, 0.2, 0.2)
	if err != nil {
		panic(err)
	}
	var evals []convexity.Evaluation
	task := &convexity.Task{
		Space: search.Space{search.IntParam("width", 2, 32, true), search.FloatParam("lr", 1e-3, 1e-1, true)},
		Build: func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
			net, err := layers.NewNet(tensor.Float64, seed)
			if err != nil {
				return nil, err
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: iris.D, Hidden: []int{cfg.Int("width")}, Out: len(iris.Classes)})
			if err != nil {
				return nil, err
			}
			return &convexity.Candidate{Model: m, Optimizer: samplers.NewAdam(cfg.Float("lr")), BatchSize: 16}, nil
		},
		Train: parts[0], Val: parts[1], Test: parts[2],
		Metric: convexity.Accuracy, Epochs: 10, Seed: 1,
		Whitebox: &convexity.WhiteboxOptions{Stride: 1}, // every iterate, as the paper sums
		Observe:  func(e convexity.Evaluation) { evals = append(evals, e) },
	}
	random := search.Sequential{Label: "random", Sampler: search.Random{}}
	if _, err := random.Search(context.Background(), rand.New(rand.NewPCG(2, 2)), task.Space, task.Objective(), 6); err != nil {
		panic(err)
	}
	for _, rule := range []string{convexity.ByValidation, convexity.ByEq7} {
		i, _, err := convexity.Select(evals, rule, 0.1)
		if err != nil {
			panic(err)
		}
		w := evals[i].Whitebox
		fmt.Printf("%-10s picks trial %d: %d Hutchinson probes, regularizer over %d iterates (stride %d)\n",
			rule, i, w.Probes, w.Iterates, w.Stride)
	}
	// Output:
	// validation picks trial 2: 4 Hutchinson probes, regularizer over 60 iterates (stride 1)
	// eq7        picks trial 2: 4 Hutchinson probes, regularizer over 60 iterates (stride 1)
}
