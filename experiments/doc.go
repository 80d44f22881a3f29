// Package experiments runs the papers' experiments: each is registered with a name, the paper
// it reproduces, its own flags, and presets — "quick" (minutes on 2 cores, what tests and CI
// run) and "paper" (the published protocol). A run returns a Result: named tables (every
// experiment has one named "summary") and the artifact files it wrote (CSV, JSON, PNG) under
// Options.Out.
//
// An experiment's Plan splits a run into deterministic cells (a dataset × method × repeat, a
// replicate × ζ, …), each with its own derived seed; Assemble turns the cells' JSON outputs
// into the tables, and Plots draws the figures from the tables alone. So a run gives the same
// result however its cells are computed: in memory on any number of workers
// (Experiment.Run), or through a results store (Runner), where every finished cell is
// committed as it completes, an interrupted run resumes where it stopped, static shards and
// workers on many machines share one run, and Report prints a stored run again without
// recomputing anything.
//
// The registry is a function returning a fresh slice: there is no package-level state.
package experiments
