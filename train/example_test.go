package train_test

import (
	"context"
	"fmt"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/train"
	"gorgonia.org/tensor"
)

// Fit an MLP to the iris data compiled into package datasets: two epochs of Adam on
// mini-batches of 16 rows, with a fifth of the rows held out for validation.
func ExampleFit() {
	iris, err := datasets.LoadEmbedded("iris")
	if err != nil {
		panic(err)
	}
	rows := make([]int, iris.N)
	for i := range rows {
		rows[i] = (i * 7) % iris.N // iris is sorted by class: interleave before splitting
	}
	trainData, valData := iris.Subset(rows[:120]), iris.Subset(rows[120:])

	net, err := layers.NewNet(tensor.Float64, 1)
	if err != nil {
		panic(err)
	}
	m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: iris.D, Hidden: []int{16}, Out: len(iris.Classes)})
	if err != nil {
		panic(err)
	}
	h, err := train.Fit(context.Background(), m, samplers.NewAdam(0.01), trainData, valData,
		train.Config{Epochs: 2, BatchSize: 16, Seed: 1})
	if err != nil {
		panic(err)
	}
	first, last := h.Epochs[0], h.Epochs[len(h.Epochs)-1]
	fmt.Println("epochs:", len(h.Epochs))
	fmt.Println("training loss fell:", last.Loss < first.Loss)
	fmt.Println("validation loss fell:", last.ValLoss < first.ValLoss)
	// Output:
	// epochs: 2
	// training loss fell: true
	// validation loss fell: true
}
