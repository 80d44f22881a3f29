package search_test

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/search"
)

// A Study lets any loop drive TPE: ask for a configuration, evaluate it however it likes,
// tell the result. Failures are told as errors; they count as TPE's worst losses.
func ExampleStudy_tpe() {
	space := search.Space{
		search.FloatParam("learning_rate", 1e-5, 1, true),
		search.IntParam("depth", 1, 4, false),
		search.CategoricalParam("padding", "valid", "same"),
	}
	study, err := search.NewStudy(space, search.TPE{}, 42)
	if err != nil {
		panic(err)
	}
	for range 40 {
		trial, err := study.Ask()
		if err != nil {
			panic(err)
		}
		cfg := trial.Config
		if cfg.Float("learning_rate") > 0.5 {
			// Training diverged.
			_ = study.Tell(trial.ID, 0, fmt.Errorf("loss is NaN at learning rate %g", cfg.Float("learning_rate")))
			continue
		}
		loss := math.Pow(math.Log10(cfg.Float("learning_rate"))+3, 2) + math.Abs(float64(cfg.Int("depth")-2))
		if cfg.Choice("padding") == "valid" {
			loss++
		}
		_ = study.Tell(trial.ID, loss, nil)
	}
	best, err := search.Best(study.Trials())
	if err != nil {
		panic(err)
	}
	fmt.Println("depth", best.Config.Int("depth"), "padding", best.Config.Choice("padding"))
	fmt.Println("learning rate within a factor 3 of 1e-3:", math.Abs(math.Log10(best.Config.Float("learning_rate"))+3) < math.Log10(3))
	// Output:
	// depth 2 padding same
	// learning rate within a factor 3 of 1e-3: true
}
