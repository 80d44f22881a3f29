package train

import (
	"math"
	"sync"

	"github.com/hyperflat/hyperflat/datasets"
)

// Batches of mostly-zero rows. One-hot encoding every column of an OpenML table (the AHSC
// authors' preprocessing) gives rows of a few nonzeros among thousands of columns; copying
// them into a batch densely would read and convert every zero of every row at every step, as
// much work as the sparse first-layer product (graph's sparse path) that follows. A Trainer
// instead compresses such a dataset once and, at each step, clears the entries the previous
// batch set and writes the new nonzeros.

// sparseMaxFill: a dataset is compressed when at most 1 in sparseMaxFill of its features is
// nonzero (graph takes its sparse path at the same fill), and it is at least sparseMinWidth
// wide (narrower rows copy as fast as they compress).
const (
	sparseMaxFill  = 16
	sparseMinWidth = 64
)

// sparseRows is a dataset's features compressed by rows: row i's nonzeros are
// val[ptr[i]:ptr[i+1]] in columns col[ptr[i]:ptr[i+1]].
type sparseRows struct {
	ptr []int
	col []int32
	val []float64
}

// DataCache keeps what Trainers prepare of the datasets they are given: a mostly-zero
// table's rows, compressed, or that a table is too full to be. Each Trainer has its own;
// Trainers that share one (Trainer.ShareData) prepare each dataset once instead of once each,
// which on a one-hot table costs as much as a one-epoch fit. A dataset is identified by its
// pointer and its feature array, which must not change while a Trainer uses it (as
// everywhere in this package). The zero DataCache is ready to use, and it is safe for
// concurrent use.
type DataCache struct {
	mu   sync.Mutex
	rows map[sparseKey]*sparseRows
}

type sparseKey struct {
	ds *datasets.Dataset
	x  *float64
	n  int
}

// dataCacheSize bounds a DataCache: past it, the cache starts over, so that one shared by
// trainings that each make datasets of their own (a holdout split per fit) does not keep them
// all.
const dataCacheSize = 64

// sparseRows returns ds compressed, or nil when ds is not sparse enough.
func (c *DataCache) sparseRows(ds *datasets.Dataset) *sparseRows {
	if ds.D < sparseMinWidth || len(ds.X) == 0 {
		return nil
	}
	key := sparseKey{ds, &ds.X[0], len(ds.X)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sp, ok := c.rows[key]; ok {
		return sp
	}
	if c.rows == nil || len(c.rows) >= dataCacheSize {
		c.rows = map[sparseKey]*sparseRows{}
	}
	sp := compressRows(ds)
	c.rows[key] = sp
	return sp
}

// compressRows compresses ds's features, or returns nil once they prove too dense.
func compressRows(ds *datasets.Dataset) *sparseRows {
	limit := len(ds.X) / sparseMaxFill
	sp := &sparseRows{ptr: make([]int, ds.N+1)}
	for i := 0; i < ds.N; i++ {
		row := ds.Row(i)
		for j := 0; j < len(row); {
			if j+8 <= len(row) && zero8(row[j:j+8:j+8]) {
				j += 8
				continue
			}
			if v := row[j]; v != 0 {
				if len(sp.col) == limit {
					return nil
				}
				sp.col = append(sp.col, int32(j))
				sp.val = append(sp.val, v)
			}
			j++
		}
		sp.ptr[i+1] = len(sp.col)
	}
	return sp
}

// zero8 reports whether all of x[0:8] are ±0: a one-hot table is mostly zeros, and testing
// eight at once reads them at memory speed. The union of the bits past the sign bit is zero
// exactly when each value's is, which is ±0 (a NaN or any other number has some).
func zero8(x []float64) bool {
	u := math.Float64bits(x[0]) | math.Float64bits(x[1]) | math.Float64bits(x[2]) | math.Float64bits(x[3]) |
		math.Float64bits(x[4]) | math.Float64bits(x[5]) | math.Float64bits(x[6]) | math.Float64bits(x[7])
	return u<<1 == 0
}
