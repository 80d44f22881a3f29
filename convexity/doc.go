// Package convexity measures how sharp or flat a trained model's loss is and uses it to pick
// hyperparameters: the closed-form strong-convexity estimate of the AHSC paper (Yedida & Saha
// 2024, Theorem 1), μ ≈ ‖a^{L−1}‖_F / ‖W^L‖_F over mini-batches, and exact curvature measures
// computed from graph Hessian-vector products (Hutchinson estimates of ‖H‖_F² and tr H, the
// top eigenvalue by power iteration, Keskar et al.'s ε-sharpness), which let a user check the
// closed form against the quantities it stands for.
//
// AHSC (Search) samples N1 configurations, trains each one epoch, ranks them by μ, fully trains
// the N2 flattest and returns the best on a validation split.
package convexity
