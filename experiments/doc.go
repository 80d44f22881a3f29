// Package experiments runs the papers' experiments: each is registered with a name, the paper
// it reproduces, its own flags, and presets — "quick" (minutes on 2 cores, what tests and CI
// run) and "paper" (the published protocol). A run returns a Result: named tables (every
// experiment has one named "summary") and the artifact files it wrote (CSV, JSON, PNG) under
// Options.Out.
//
// The registry is a function returning a fresh slice: there is no package-level state.
package experiments
