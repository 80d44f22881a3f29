// Package experiments is the registry of the papers' experiments that the hyperflat command
// runs: each entry names an experiment, the paper it reproduces, and how to run it on a preset
// small enough for tests or on the paper's full protocol.
//
// The registry is a plain function returning a fresh slice, so there is no package-level state
// to mutate; experiments are added here as the issues that implement them land.
package experiments
