// Command hyperflat runs white-box hyperparameter optimization experiments and the checks that
// back them.
//
// Usage:
//
//	hyperflat <command> [flags]
//
// Commands:
//
//	version   print the version of hyperflat, Go, gorgonia and the BLAS in use
//	list      list the registered experiments
//	check     run the first- and second-order gradient checks of every graph op
//	run       run an experiment, in memory or through a results store (--out, --store)
//	worker    compute cells of runs in a shared store
//	runs      list the runs in a store with their status
//	report    print a stored run's tables and draw its figures, without recomputing
//	trial     train and score one configuration of the ahsc objective (a Katib trial)
//
// Run "hyperflat <command> --help" for a command's flags. Usage errors exit with status 2,
// failures with status 1.
package main

import (
	"os"

	"github.com/hyperflat/hyperflat/internal/gcpolicy"
)

func main() {
	// GOGC 400 under a soft memory limit, unless GOGC or GOMEMLIMIT say otherwise: see
	// package gcpolicy (and "hyperflat version" for what is in effect)
	gcpolicy.Apply()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
