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

// AHSC on a user's task: a one-hidden-layer MLP on the embedded iris data, whose width,
// learning rate and batch size are searched. AHSC screens N1 configurations by one epoch of
// training and μ, and fully trains the N2 flattest through the task's objective.
func ExampleAHSC_Run() {
	iris, err := datasets.LoadEmbedded("iris")
	if err != nil {
		panic(err)
	}
	parts, err := datasets.Split(iris, rand.New(rand.NewPCG(1, 1)), 0.6, 0.2, 0.2)
	if err != nil {
		panic(err)
	}
	st, err := datasets.FitStandardizer(parts[0])
	if err != nil {
		panic(err)
	}
	for i := range parts {
		if parts[i], err = st.Transform(parts[i]); err != nil {
			panic(err)
		}
	}
	task := &convexity.Task{
		Space: search.Space{
			search.IntParam("width", 4, 32, true),
			search.FloatParam("lr", 1e-3, 1e-1, true),
			search.CategoricalParam("batch", "8", "16"),
		},
		Build: func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
			net, err := layers.NewNet(tensor.Float64, seed)
			if err != nil {
				return nil, err
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: iris.D, Hidden: []int{cfg.Int("width")}, Out: len(iris.Classes)})
			if err != nil {
				return nil, err
			}
			batch := 8
			if cfg.Choice("batch") == "16" {
				batch = 16
			}
			return &convexity.Candidate{Model: m, Optimizer: samplers.NewAdam(cfg.Float("lr")), BatchSize: batch}, nil
		},
		Train: parts[0], Val: parts[1], Test: parts[2],
		Metric: convexity.Accuracy, Epochs: 5, Seed: 1,
	}
	a := &convexity.AHSC{Task: task, N1: 6, N2: 2}
	res, err := a.Run(context.Background(), rand.New(rand.NewPCG(2, 2)), task.Space, task.Objective())
	if err != nil {
		panic(err)
	}
	best, err := search.Best(res.Trials)
	fmt.Printf("screened %d, dropped %d, trained %d fully\n", len(res.Screenings), res.Dropped(), len(res.Trials))
	fmt.Println("selected a configuration:", err == nil && best.State == search.Complete)
	// Output:
	// screened 6, dropped 0, trained 2 fully
	// selected a configuration: true
}
