package vec

// SpRowF32 sets c[j] += Σ_t val[t]·b[idx[t]·ldb + j] for j < n (n rounded down to a multiple
// of 8; callers finish the tail), accumulating over t in order with fused multiply-adds.
//
//go:noescape
func SpRowF32(c, b *float32, ldb int, idx *int32, val *float32, nnz, n int)

// SpRowF64 is SpRowF32 in float64, for n rounded down to a multiple of 4.
//
//go:noescape
func SpRowF64(c, b *float64, ldb int, idx *int32, val *float64, nnz, n int)

// FirstNonzeroF32 returns the least i < n with x[i] ≠ 0 (NaN is nonzero, −0 zero), or n.
//
//go:noescape
func FirstNonzeroF32(x *float32, n int) int

// FirstNonzeroF64 is FirstNonzeroF32 in float64.
//
//go:noescape
func FirstNonzeroF64(x *float64, n int) int

// CountNonzeroF32 counts the entries of x[:n] that are ≠ 0 (NaN counts, −0 does not), for n
// rounded down to a multiple of 8.
//
//go:noescape
func CountNonzeroF32(x *float32, n int) int

// CountNonzeroF64 is CountNonzeroF32 in float64, for n rounded down to a multiple of 4.
//
//go:noescape
func CountNonzeroF64(x *float64, n int) int

// ClearNT sets the n bytes at p (32-byte aligned, n a multiple of 128) to zero with
// non-temporal stores, which write memory without first reading it into the cache: for a
// buffer larger than the cache that is then read only in part (a one-hot layer's weight
// gradient), half the traffic of ordinary stores.
//
//go:noescape
func ClearNT(p *byte, n int)
