// Package losses holds the empirical risks models are trained and validated on, as
// differentiable graph nodes (multiclass and binary cross-entropy from logits, mean squared
// error), and the metrics their predictions are scored by (accuracy, ROC-AUC binary and
// one-vs-rest macro, log-loss), computed on plain slices.
//
// Every risk is the mean of a per-example loss over the batch, R̂(θ; S) = (1/|S|) Σ ℓ(θ; x, y),
// so that a gradient of a risk is an average of per-example gradients.
package losses
