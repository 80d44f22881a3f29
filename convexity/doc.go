// Package convexity measures how sharp or flat a trained model's loss is and uses it to pick
// hyperparameters: the closed-form strong-convexity estimate of the AHSC paper (Yedida & Saha
// 2024, "Strong convexity-guided hyper-parameter optimization for flatter losses", Theorem 1
// of Section 3.2), μ ≈ ‖a^{L−1}‖_F / ‖W^L‖_F over mini-batches, and exact curvature measures
// computed from graph Hessian-vector products (Hutchinson estimates of ‖H‖_F² and tr H, the
// top eigenvalue by power iteration, Keskar et al.'s ε-sharpness), which let a user check the
// closed form against the quantities it stands for.
//
// A Task is a supervised problem a search can build, train and look inside; its Objective is
// the one objective every method of a comparison evaluates through, and its Observe hook
// hands each evaluation's record (test results, failures) to the caller. AHSC.Run is
// Algorithm 1: it samples N1 configurations, trains each one epoch, ranks them by μ (as the
// authors' hpobench/util/stcvx.py and image/src/util.py get_convexity compute it: the max
// over consecutive unshuffled batches, no 1/m), fully trains the N2 flattest and returns a
// Result with the trials and every screening; search.Best then selects on validation data.
//
// With Task.Whitebox set, every full training also keeps a white-box record (Whitebox): μ,
// the training risk's Hessian trace (Hutchinson) and top eigenvalue (Lanczos), the
// PAC-Bayes paper's Eq. 7 regularizer √Σ_t‖∇R̂_T(θ_t) − ∇R̂_V(θ_t)‖² over the training
// iterates (Cherian et al. 2020; DEShawResearch/PACBayesHyperOpt weight_decay.py), and the
// generalization gaps; Select with ByEq7 picks a search's configuration by the validation
// loss plus ζ times that regularizer instead of by the validation objective alone.
package convexity
