package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestWalksSameBits checks that streaming B through KernRows4 and walking C a block row at a
// time give exactly the products of the column-strip walk, on shapes around every boundary
// (rows mod 4, columns mod 24 and 8, panels of kc, odd depths), transposes, betas and padded
// leading dimensions; in float64, the block-row walk alone.
func TestWalksSameBits(t *testing.T) {
	if !Available {
		t.Skip("no AVX2/FMA")
	}
	strips := kernels32
	strips.rows, strips.rowMajorBytes, strips.tallAPanelBytes = nil, 0, 0
	streamed := kernels32
	streamed.rowsMinK = 1
	others := []kernelSet{kernels32, streamed}
	if HasAVX512 {
		z, zstrips := kernels32z, kernels32z
		zstrips.rows, zstrips.rowMajorBytes, zstrips.tallAPanelBytes = nil, 0, 0
		others = append(others, z, zstrips)
	} else {
		t.Log("this CPU lacks AVX512F: the AVX-512 walks are not compared")
	}
	walksSameBits[float32](t, &bufs32, strips, others...)
	strips64 := kernels64
	strips64.rowMajorBytes = 0
	walksSameBits[float64](t, &bufs64, strips64, kernels64)
}

func walksSameBits[T float32 | float64](t *testing.T, pool *sync.Pool, strips kernelSet, others ...kernelSet) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 3, 4, 5, 8, 9} {
		for _, n := range []int{8, 24, 31, 48, 100, 144} {
			for _, k := range []int{1, 2, 33, 256, 257, 600} {
				for _, ta := range []bool{false, true} {
					for _, tb := range []bool{false, true} {
						for _, beta := range []T{0, 1, 0.5} {
							a, lda, b, ldb, c, ldc := operands[T](rng, m, n, k, ta, tb)
							want := append([]T(nil), c...)
							gemm(strips, pool, ta, tb, m, n, k, a, lda, b, ldb, beta, want, ldc)
							for _, ks := range others {
								got := append([]T(nil), c...)
								gemm(ks, pool, ta, tb, m, n, k, a, lda, b, ldb, beta, got, ldc)
								for i := range got {
									if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
										t.Fatalf("%T m%d n%d k%d ta %v tb %v beta %v: element %d = %v, strips give %v", got[0], m, n, k, ta, tb, beta, i, got[i], want[i])
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// operands draws op(A) m×k, op(B) k×n and C m×n with padded leading dimensions.
func operands[T float32 | float64](rng *rand.Rand, m, n, k int, ta, tb bool) (a []T, lda int, b []T, ldb int, c []T, ldc int) {
	ar, br := m, k
	lda, ldb, ldc = k+3, n+5, n+2
	if ta {
		ar, lda = k, m+3
	}
	if tb {
		br, ldb = n, k+5
	}
	a, b, c = make([]T, ar*lda), make([]T, br*ldb), make([]T, m*ldc)
	for _, x := range [][]T{a, b, c} {
		for i := range x {
			x[i] = T(rng.NormFloat64())
		}
	}
	return a, lda, b, ldb, c, ldc
}

// BenchmarkSmallBatch times the products of one step of a dense layer of 1,024 × 1,024 at
// batch sizes 4, 8 and 16 (phoneme's clean BOHB cells): forward X·W and weight gradient Xᵀ·dY,
// over six layers' weights in turn so that, as in a step, B or C comes from memory rather than
// the cache. "old" is the column-strip walk in graph's eight pieces (one core before the block-row
// walks), "pieces" the walks here in those pieces (several cores), "whole" one call (one core).
func BenchmarkSmallBatch(b *testing.B) {
	if !Available {
		b.Skip("no AVX2/FMA")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	strips := kernels32
	strips.rows, strips.rowMajorBytes = nil, 0
	var pool sync.Pool
	const width, layers, pieces = 1024, 6, 8
	big := make([][]float32, layers)
	for l := range big {
		big[l] = make([]float32, width*width)
		for i := range big[l] {
			big[l][i] = float32(rng.NormFloat64())
		}
	}
	for _, batch := range []int{4, 8, 16} {
		small := make([]float32, batch*width)
		for i := range small {
			small[i] = float32(rng.NormFloat64())
		}
		out := make([]float32, batch*width)
		for _, v := range []struct {
			name   string
			ks     kernelSet
			pieces int
		}{{"old", strips, pieces}, {"pieces", kernels32, pieces}, {"whole", kernels32, 1}} {
			b.Run(fmt.Sprintf("fwd-b%d/%s", batch, v.name), func(b *testing.B) {
				for i := range b.N {
					w := big[i%layers]
					for q := range v.pieces { // X·W by column pieces
						c0, c1 := q*width/v.pieces, (q+1)*width/v.pieces
						gemm(v.ks, &pool, false, false, batch, c1-c0, width, small, width, w[c0:], width, 0, out[c0:], width)
					}
				}
			})
			b.Run(fmt.Sprintf("dW-b%d/%s", batch, v.name), func(b *testing.B) {
				for i := range b.N {
					g := big[i%layers]
					for q := range v.pieces { // Xᵀ·dY by row pieces
						r0, r1 := q*width/v.pieces, (q+1)*width/v.pieces
						gemm(v.ks, &pool, true, false, r1-r0, width, batch, small[r0:], width, small, width, 0, g[r0*width:], width)
					}
				}
			})
		}
	}
}
