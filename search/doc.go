// Package search holds black-box hyperparameter search: a search space of integer, real
// (optionally log-scaled) and categorical dimensions, which a YAML or JSON file can declare
// (ReadSpaceFile); a Study with ask/tell through which any loop can drive a Sampler; and the
// baselines the AHSC paper compares against — random search, TPE, BOHB, a HEBO-style
// Gaussian-process optimizer and TuRBO-1.
//
// Every method draws its randomness from an explicit *rand.Rand and minimizes. Model-based
// samplers work in the unit hypercube given by Space.ToUnit and Space.FromUnit.
package search
