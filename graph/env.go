package graph

import (
	"fmt"
	"os"

	kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"
	"github.com/hyperflat/hyperflat/graph/internal/vec"
)

// The environment switches of package graph, for comparisons and debugging. They are read
// here and nowhere else, once, at start-up, from one table, in the manner of Go's
// internal/godebugs: README.md's "Environment switches" table lists the same rows
// (TestEnvSwitchesMatchREADME), and tests change a switch through setSwitch, which restores
// it afterwards, rather than by assigning the variables it sets.

// envSwitch is one environment variable of the package.
type envSwitch struct {
	name    string
	def     string // what holds when the variable is unset or empty
	meaning string
	// set applies the value v ("" when unset), or reports why it is not one.
	set   func(v string) error
	value string // the value in effect
}

var envSwitches = []envSwitch{
	{
		name:    "HYPERFLAT_NOFUSE",
		def:     "fusion on",
		meaning: "any non-empty value: Compile fuses no elementwise chains, for comparisons",
		set:     func(v string) error { fuseEnabled = v == ""; return nil },
	},
	{
		name:    "HYPERFLAT_SGEMM",
		def:     "chosen by shape",
		meaning: "blas: float32 and float64 matrix products always use the BLAS; kernels: always graph's own kernels (AVX-512 or AVX2/FMA), for comparisons",
		set: func(v string) error {
			switch v {
			case "", "blas", "kernels":
				sgemmMode = v
				return nil
			}
			return fmt.Errorf("want blas or kernels")
		},
	},
	{
		name:    "HYPERFLAT_SIMD",
		def:     "the widest the CPU has",
		meaning: "avx2: graph's float32 kernels use AVX2/FMA even where the CPU has AVX-512 (the same bits, slower), for comparisons and to test that path",
		set: func(v string) error {
			switch v {
			case "", "avx2":
				kern.UseAVX512(v == "")
				adam512 = v == "" && vec.HasAVX512
				return nil
			}
			return fmt.Errorf("want avx2")
		},
	},
	{
		name:    "HYPERFLAT_CONV",
		def:     "batched for small output maps",
		meaning: "image: every convolution runs image by image, for comparisons with the batched path",
		set: func(v string) error {
			switch v {
			case "", "image":
				convPath = v
				return nil
			}
			return fmt.Errorf("want image")
		},
	},
	{
		name:    "HYPERFLAT_SPARSE",
		def:     "zeros skipped in mostly-zero left operands",
		meaning: "off: every matrix product is dense, even when its left operand is almost all zeros (one-hot inputs), for comparisons",
		set: func(v string) error {
			switch v {
			case "", "off":
				sparseOff = v == "off"
				return nil
			}
			return fmt.Errorf("want off")
		},
	},
	{
		name:    "HYPERFLAT_DEFER",
		def:     "rows no batch reads updated when next read",
		meaning: "off: Program.ReadOnlyThroughProduct reports no weight, so training updates every row of a layer behind one-hot inputs at every step, for comparisons",
		set: func(v string) error {
			switch v {
			case "", "off":
				deferOff = v == "off"
				return nil
			}
			return fmt.Errorf("want off")
		},
	},
	{
		name:    "HYPERFLAT_PRODUCTS",
		def:     "small-batch weight gradients computed inside the Adam update",
		meaning: "off: Program.DeferProduct leaves no weight gradient uncomputed, so every run writes it out and the optimizer reads it back, for comparisons",
		set: func(v string) error {
			switch v {
			case "", "off":
				productsOff = v == "off"
				return nil
			}
			return fmt.Errorf("want off")
		},
	},
	{
		name:    "HYPERFLAT_FUSEDUMP",
		def:     "off",
		meaning: "any non-empty value: Compile prints every fused kernel (its ops, operands and block sizes) to stderr",
		set:     func(v string) error { fuseDump = v != ""; return nil },
	},
}

// What the switches set.
var (
	fuseEnabled = true // Compile fuses elementwise chains (fuse.go)
	fuseDump    bool   // Compile prints the kernels it fuses
	sgemmMode   string // "", "blas" or "kernels" (useSgemmKernels)
	convPath    string // "" or "image" (convOp)
	sparseOff   bool   // gemmAcc never takes the sparse path (gemmSparse)
	deferOff    bool   // ReadOnlyThroughProduct is always false
	productsOff bool   // productDeferrable is always false
)

func init() {
	for i := range envSwitches {
		s := &envSwitches[i]
		if err := s.apply(os.Getenv(s.name)); err != nil {
			// no caller to return the error to, and a misspelt value must not pass unnoticed
			fmt.Fprintf(os.Stderr, "graph: ignoring %v\n", err)
		}
	}
}

// apply puts value v of the switch in effect.
func (s *envSwitch) apply(v string) error {
	if err := s.set(v); err != nil {
		return fmt.Errorf("%s=%q: %w", s.name, v, err)
	}
	s.value = v
	return nil
}

// lookupSwitch returns the switch of that name.
func lookupSwitch(name string) (*envSwitch, error) {
	for i := range envSwitches {
		if envSwitches[i].name == name {
			return &envSwitches[i], nil
		}
	}
	return nil, fmt.Errorf("graph: no environment switch %s", name)
}
