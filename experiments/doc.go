// Package experiments is what every experiment of the two papers shares: typed
// configurations with presets, plans of deterministic cells, the runner over a results store,
// result tables and figures, and seed derivation. The experiments themselves live in their own
// packages — experiments/ahsc, experiments/freedman, experiments/weightdecay — and
// experiments/all lists them.
//
// An experiment's settings are one Config struct whose tagged fields are its flags, each with
// its default in the two presets, "quick" (minutes on 2 cores, what tests and CI run) and
// "paper" (the published protocol); Configure and Resolve turn a preset and flags into the
// finished, validated struct. That struct is the run's protocol: Identity hashes it, the store
// keeps it, and a worker decodes it back (DecodeOptions).
//
// An experiment's Plan splits a run into deterministic cells (a dataset × method × repeat, a
// replicate × ζ, …), each with its own seed (DeriveSeed); Assemble turns the cells' JSON
// outputs into the tables, and Plots draws the figures from the tables alone. So a run gives
// the same result however its cells are computed: in memory on any number of workers
// (Experiment.Run), or through a results store (Runner), where every finished cell is
// committed as it completes, an interrupted run resumes where it stopped, static shards and
// workers on many machines share one run, and Report prints a stored run again without
// recomputing anything. A cell longer than its worker may live saves its progress through
// its Checkpoint (CheckpointOf), and the worker that takes it over goes on from there.
//
// There is no package-level state: a Registry is a value.
package experiments
