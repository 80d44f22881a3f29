// Package premise tests the premise of Yedida & Saha (2024), "Strong convexity-guided
// hyper-parameter optimization for flatter losses": that a configuration whose loss has a
// low strong convexity μ after one epoch of training generalizes better (Section 1 and
// Figure 1; Section 3.2 derives μ ≤ ‖∇²E‖_F as a bound on Keskar et al.'s sharpness, and
// Algorithm 1 screens configurations by the closed form of Theorem 1). The paper shows this
// on two configurations of one dataset; this experiment measures it over many, beside the
// quantities the closed form stands for. Experiment registers it as `hyperflat run premise`;
// Config is the whole protocol, with the quick and paper presets' defaults in its tags.
//
// The protocol:
//
//   - Data and training are the ahsc experiment's (ahsc.TrialTask, the task every one of its
//     methods and `hyperflat trial` train through): its clean protocol's split of one repeat
//     (Config.Repeat) and that repeat's initial weights, its preprocessing, its spaces
//     (Table 2: ahsc.OpenMLSpace on the OpenML sets, ahsc.BayesmarkSpace on Bayesmark's) and
//     builders, and its early-stopped full training (on the OpenML sets up to 200 epochs,
//     patience 5, as hpobench/util/eval.py of the authors' code, yrahul3910/flatness-guided-hpo,
//     but on the validation loss).
//   - Per dataset, Config.Configs configurations are sampled uniformly from the space, each
//     from its own stream, DeriveSeed(seed, "premise", dataset, "config", i), which also draws
//     its Hessian probes: a cell per configuration, so runs shard and resume.
//   - Each configuration is trained one epoch (Algorithm 1, line 6) and measured there: μ
//     exactly as AHSC screens by it (convexity.StrongConvexity: the max over consecutive
//     batches of the configuration's batch size of ‖a^{L−1}_B‖_F/‖W^L‖_F, as get_convexity in
//     hpobench/util/stcvx.py), and, of the same weights' mean training loss (every training
//     row by default; convexity.NewTrainingCurvature, Hessian-vector products of the graph
//     package), the trace tr H, the Frobenius norm ‖H‖_F and the largest eigenvalue λ_max.
//     Up to Config.ExactParams parameters, H is formed from one product per parameter and
//     the three are exact; above, tr H and ‖H‖_F² are Hutchinson estimates from the same
//     Config.Probes Rademacher vectors (their standard errors are in the configurations
//     table) and λ_max the largest Ritz value of Config.Lanczos Lanczos steps.
//     Configurations AHSC would drop (a diverged epoch, μ not positive and finite) are
//     recorded and left out of the correlations.
//   - Each is then trained fully as the ahsc experiment's objective does (Task.Fit: the same
//     initial weights, batches and early stopping, so its test metric is the one that
//     experiment reports for the configuration) and scored on its training, validation and
//     test data: the test metric (ROC-AUC on the OpenML sets, one-vs-rest macro for several
//     classes; accuracy on Bayesmark's) and the generalization gap, training metric − test
//     metric. (On Bayesmark's sets the validation metric here is the early-stopping split's,
//     not the cross-validation the ahsc objective selects by.) Models compute in the float
//     type that experiment trains the dataset in (the settings table's dtype).
//   - The summary is, per dataset and measure, Spearman's ρ (stats.Spearman, SciPy's
//     spearmanr) of the measure with the test metric and with the gap, each with its pair-
//     bootstrap 95% interval (stats.SpearmanBootstrap: the configurations resampled,
//     experiments.BootResamples resamples from experiments.BootSeed, percentile method),
//     their two-sided p-values, ρ with μ, and n. The report recomputes it from the stored
//     records, so a regenerated page has the intervals without a rerun. The premise predicts
//     ρ < 0 with the test metric and ρ > 0 with the gap.
//   - Figure 1: the configurations of Config.Figure (the paper's Australian) are trained
//     again epoch by epoch from the same screening point, scored after every epoch; the
//     figure shows the training and test metric and loss of the one of least μ and the one of
//     greatest μ among them. (The paper's figure also draws the two loss landscapes, Li et
//     al. 2018's filter-normalized plots, which are not reproduced.)
//
// WriteMarkdown renders stored runs, finished or not, as docs/reproduction/premise.md and
// its Figure 1 (`hyperflat report --markdown DIR`).
package premise
