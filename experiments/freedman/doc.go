// Package freedman reproduces Freedman's paradox, the feature-selection experiment of
// "Efficient Hyperparameter Optimization By Way Of PAC-Bayes Bound Minimization" (Section 4.1,
// Figure 4.1; Appendix C.1, Figure C.1): greedy forward selection over 500 pure-noise features
// (plus, in the signal variant, two real ones) picks spurious predictors when each candidate
// set is scored by its validation error (Eq. 1), and stops at the true ones when it is scored
// by the PAC-Bayes objective (Eq. 7).
//
// The protocol follows the authors' scripts freedman/freedman.py (Eq. 7: create_dataset,
// forward_selection, run_chains) and freedman/freedman_naive.py (Eq. 1) in
// github.com/DEShawResearch/PACBayesHyperOpt, and their plotting in
// freedman/plot-comparison.py:
//
//  1. Data (Appendix C.1; create_dataset; Config's defaults): 500 rows of 500 standard normal features, rows
//     0–249 for training and 250–499 for validation, and 500 fresh test rows. Signal variant:
//     y = (x₀ + x₁ + e)/√6 with e ~ N(0, 2²); null variant: y ~ N(0, 1) independent of x
//     (here also on the test rows, where the authors' script draws signal-variant labels).
//  2. Forward selection (Section 4.1): from the empty set, each step scores every remaining
//     feature j (ascending) as selected ∪ {j} and adds the first minimizer. The selected model
//     is the prefix of the path with the smallest objective, the empty model included.
//  3. Objectives: validation, the validation MSE of the OLS fit on the training rows (Eq. 1);
//     pac-bayes, Eq. 7 in the square-root-of-sum form run_chains computes,
//     E MSE_V(θ_T) + √(Σ_{t<T} β η/4 · E‖∇R̂_T(θ_t) − ∇R̂_V(θ_t)‖²), over Langevin chains
//     θ ← θ − η∇R̂_T + √(2η/(β n_T)) ξ from θ₀ ~ N(0, I) (or, with --objective exact, the
//     closed form of that expectation for this linear-Gaussian model); and, as baselines
//     outside the paper's figures, AIC (the classical guard its motivation of Eq. 7 names),
//     BIC and 10-fold cross-validation, each on the 500 training and validation rows.
//  4. Reporting (plot-comparison.py): the test MSE of the OLS fit on the training rows for
//     every prefix of each path, against the objective, as in Figures 4.1 and C.1.
//
// Everything is linear least squares, so every method works on sufficient statistics: the
// Gram matrices XᵀX, Xᵀy, yᵀy of each row block are computed once per data set, and a
// candidate feature set only slices them. That makes a candidate's OLS fit O(k³) instead of
// O(nk²), and a Langevin step O(k²) per chain, independent of n.
//
// A run is one cell per repeat × method. The methods of a repeat share its data on purpose
// (they are compared on the same draw); every random stream is derived from the run's --seed
// by experiments.DeriveSeed: the cell's seed is DeriveSeed(seed, "freedman", "repeat", r), the
// root of the repeat's three streams, DeriveSeed(cell seed, "data"), DeriveSeed(cell seed,
// "folds") and DeriveSeed(cell seed, "method", "pac-bayes", "langevin") (the chains' noise,
// shared by the candidates of a step as common random numbers).
//
// # The authors' data and chains: --data authors
//
// With --data authors a run reproduces freedman.py and freedman_naive.py on their own random
// numbers, so that its outputs can be set beside those of their scripts. NumPy's legacy
// RandomState (MT19937, 53-bit doubles, the polar Gaussian with its cached second value, and
// glibc's rounding of log) is ported bit for bit in internal/nprand. How the two modes differ:
//
//   - Data: project, the Go PCG stream DeriveSeed(cell seed, "data"); authors, create_dataset's
//     draws from RandomState(r) for repeat r (repeat 0 is their data set: the design starts
//     1.764052345967664, 0.4001572083672233, 0.9787379841057392), in their order: the
//     training and validation design, their labels, the test design, the test labels.
//     --seed then seeds only cv10's folds (their scripts have no cross-validation).
//   - Null variant's test labels: project, N(0, 1) independent of x, like its training labels;
//     authors, (x₀ + x₁ + e)/√6 as in the signal variant. That is a quirk of create_dataset,
//     which applies --null to the training and validation labels only. Since both variants
//     draw 500 label normals before the test block, the authors' null and signal variants
//     share the same design and the same test set. So in their null variant a selection that
//     picks x₀ or x₁ by chance has a lower test MSE, and "no feature" is not the best answer
//     on their test set.
//   - Chain noise: project, one stream per coordinate position, samplers.ChainRand(seed, a),
//     shared by every candidate (common random numbers, even across prefixes); authors,
//     run_chains' RandomState(0) re-seeded for every candidate, drawing each chain's θ₀ and
//     then, step by step and chain by chain, each step's noise, so that coordinate a of
//     chain c of a k-feature candidate reads a value that moves with k.
//   - Chains: project 200, authors 10 (their --num-chains). With 10 the Monte-Carlo error of
//     a candidate's objective (~10⁻²) is large next to the gaps between candidates, and the
//     minimum over ~500 candidates is biased low; see Config.Chains.
//   - Path lengths: project 25/40 validation and 5/20 pac-bayes steps (quick/paper); authors 40
//     and 20 in both presets (freedman_naive.py's and freedman.py's --num-indices).
//   - The empty model: project, step 0 of every path is scored and may be selected (the right
//     answer in the null variant); authors, it is never a candidate, as their scripts start
//     from one feature: its objective is NaN (null in JSON) and a selection has ≥ 1 feature.
//     Its test MSE is still reported.
//   - Unchanged: the Langevin settings (T = 50, η = β = 0.1, Eq. 7's weight β·η/4 from their
//     --lr-div-factor 4), the objectives (validation MSE of the OLS fit, run_chains'
//     √(Σ_t mean_c β(η/4)‖g_T − g_V‖²) + mean_c MSE_V(θ_T), AIC, BIC, CV), forward selection's
//     first-minimizer rule, and the test MSE of the OLS fit on the training rows
//     (plot-comparison.py). --objective exact, the chains' closed form, uses no noise and so
//     is the same computation on either data.
//
// The arithmetic is not theirs (Gram statistics and Cholesky here, BLAS products and lstsq
// there), so objectives agree to about 10⁻¹⁵ rather than bit for bit; on RandomState(0) every
// selection agrees (authors_test.go pins the first steps against their scripts' output).
package freedman
