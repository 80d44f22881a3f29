package weightdecay

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
)

// subsets are the images of one run: training, validation and selection sets of cfg.Images
// each from the training split, and the test set.
type subsets struct {
	train, val, sel, test *datasets.Dataset
}

// loadSubsets draws the run's images. They depend on the run's seed only, not on the
// replicate: fetch_MNIST_data in weight_decay.py draws them under seed_everything(0) and every
// replicate (fit_num) reuses them, so replicates differ in their initialization alone.
func loadSubsets(ctx context.Context, opt experiments.Options, cfg *Config) (*subsets, error) {
	full, test, err := datasets.Load(ctx, cfg.Dataset, opt.DataDir)
	if err != nil {
		return nil, err
	}
	if test == nil {
		return nil, fmt.Errorf("%s has no test split", cfg.Dataset)
	}
	if n := cfg.Images; 3*n > full.N {
		return nil, experiments.FlagErrorf("images", "%d: the training split has %d images, want at most a third of them", n, full.N)
	}
	if cfg.Dataset == "cifar10" {
		// torchvision's Normalize(mean 0.5, std 0.5) per channel, as fetch_CIFAR_data.
		full, test = scaleImages(full), scaleImages(test)
	}
	perm := rand.New(rand.NewPCG(experiments.DeriveSeed(opt.Seed, "weightdecay", "images"), 0)).Perm(full.N)
	n := cfg.Images
	d := &subsets{
		train: full.Subset(perm[:n]),
		val:   full.Subset(perm[n : 2*n]),
		sel:   full.Subset(perm[2*n : 3*n]),
		test:  test,
	}
	if cfg.TestRows < test.N {
		rng := rand.New(rand.NewPCG(experiments.DeriveSeed(opt.Seed, "weightdecay", "test-rows"), 0))
		d.test = test.Subset(rng.Perm(test.N)[:cfg.TestRows])
	}
	return d, nil
}

func scaleImages(d *datasets.Dataset) *datasets.Dataset {
	out := *d
	out.X = make([]float64, len(d.X))
	for i, v := range d.X {
		out.X[i] = (v - 0.5) / 0.5
	}
	return &out
}
