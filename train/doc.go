// Package train fits models from package layers to datasets with an optimizer from package
// samplers: mini-batches and epochs, a per-epoch history of losses and metrics, early stopping,
// coupled or decoupled weight decay, and a hard stop — an error, not garbage — as soon as a
// loss or gradient stops being finite.
//
// Graphs have static shapes, so a Trainer compiles one training program and one evaluation
// program per batch size it meets (the last, smaller batch of an epoch gets its own) and reuses
// them for every step. Shuffling and dropout draw from generators seeded by Config.Seed, so the
// same seed gives bit-identical weights.
package train
