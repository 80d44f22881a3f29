//go:build !unix

package experiments

// processAlive cannot tell elsewhere: assume alive, so that the cell waits for its lease.
func processAlive(int) bool { return true }
