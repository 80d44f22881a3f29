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
// replicate (fit_num) reuses them, so replicates differ in their initialization alone. Under
// --protocol authors the MNIST training and validation images are the code's own
// (authorsMNIST, whatever the seed); on CIFAR-10 the files here hold 1000 of the 50000
// training images, 1 of the code's 100, so both protocols draw from those by the seed.
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
	if cfg.authors() && cfg.Dataset == "mnist" {
		if perm, err = authorsOrder(perm, n, full.N); err != nil {
			return nil, err
		}
	}
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

// authorsOrder puts weight_decay.py's 50 training and 50 validation MNIST images
// (authorsMNIST) first, followed by the images of perm that are not among them, in perm's
// order (the selection images come from those). The draw needs MNIST's whole training split,
// in the order of its files (torchvision's), and 50 images a set.
func authorsOrder(perm []int, images, n int) ([]int, error) {
	if images != len(authorsMNIST)/2 {
		return nil, experiments.FlagErrorf("images", "%d: --protocol authors draws weight_decay.py's %d training and %d validation images; want %d",
			images, len(authorsMNIST)/2, len(authorsMNIST)/2, len(authorsMNIST)/2)
	}
	if n != 60000 {
		return nil, fmt.Errorf("weightdecay: --protocol authors draws from MNIST's 60000 training images, the split here has %d", n)
	}
	out := make([]int, 0, n)
	taken := make(map[int]bool, len(authorsMNIST))
	for _, i := range authorsMNIST {
		out = append(out, i)
		taken[i] = true
	}
	for _, i := range perm {
		if !taken[i] {
			out = append(out, i)
		}
	}
	return out, nil
}

func scaleImages(d *datasets.Dataset) *datasets.Dataset {
	out := *d
	out.X = make([]float64, len(d.X))
	for i, v := range d.X {
		out.X[i] = (v - 0.5) / 0.5
	}
	return &out
}
