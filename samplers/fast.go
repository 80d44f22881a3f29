package samplers

import (
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
)

// Checked is implemented by optimizers whose Step checks the parameters as it writes them, so
// that a caller's divergence check (train.Trainer.Step's) need not read them again: the
// update pass already has every new value in a register.
type Checked interface {
	// NonFiniteAfterStep is the index of the first parameter that the last successful Step
	// left with a NaN or infinite entry, or −1.
	NonFiniteAfterStep() int
}

var (
	_ Checked = (*Adam)(nil)
	_ Checked = (*RMSprop)(nil)
	_ Checked = (*Langevin)(nil)
)

// fastFiniteGrads is finiteGrads through graph's vector scan: the same check and error, at
// memory speed.
func fastFiniteGrads[T graph.Float](grads []G.Value) error {
	for i, g := range grads {
		e, err := values[T](g)
		if err != nil {
			return fmt.Errorf("samplers: gradient %d: %w", i, err)
		}
		if j := graph.FirstNonFinite(e); j >= 0 {
			return fmt.Errorf("samplers: gradient of parameter %d has a non-finite entry (%v at flat index %d)", i, e[j], j)
		}
	}
	return nil
}
