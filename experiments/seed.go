package experiments

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// DeriveSeed derives the seed of one random stream from the run's root seed and the path that
// names the stream — the experiment, then for instance the dataset, repeat, method and
// purpose: DeriveSeed(seed, "ahsc", "iris", "repeat", 3, "method", "tpe"). Distinct paths give
// independent streams, and unlike root+repeat no two (root, path) pairs collide in practice:
// --seed 2's repeat 0 is not --seed 1's repeat 1. Path elements are strings or integers.
func DeriveSeed(root uint64, path ...any) uint64 {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], root)
	h.Write(b[:])
	for _, p := range path {
		var s string
		switch x := p.(type) {
		case string:
			s = "s" + x
		case int:
			s = fmt.Sprintf("i%d", x)
		case uint64:
			s = fmt.Sprintf("u%d", x)
		default:
			panic(fmt.Sprintf("experiments: DeriveSeed path element of type %T", p))
		}
		// Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	return binary.LittleEndian.Uint64(h.Sum(nil)[:8])
}
