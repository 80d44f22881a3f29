package graph

import (
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Pool keeps the result buffers of released Programs for the next Programs that use it
// (Program.UsePool), so that a program compiled again and again for a short life (the
// white-box record of every trial of a search) writes its first run into memory already
// mapped and touched rather than into fresh pages: on the machines measured, a first run
// cost 3 to 7 times a later one, most of it the page faults of its new buffers.
//
// A buffer is handed out zeroed, as fresh memory is, so an op's result does not depend on
// which buffer it got or on what ran before: a program computes the same bits with or
// without a pool, with any number of goroutines sharing it. A Pool is safe for concurrent
// use; it holds at most the bytes it was made with and lets the garbage collector have the
// rest.
type Pool struct {
	mu    sync.Mutex
	free  map[poolKey][]any // []float32 or []float64, each of its key's length
	bytes int64
	max   int64
}

type poolKey struct {
	f32 bool
	n   int
}

// NewPool returns a pool that keeps at most maxBytes of buffers (0: none kept).
func NewPool(maxBytes int64) *Pool {
	return &Pool{free: map[poolKey][]any{}, max: max(maxBytes, 0)}
}

// Bytes is the memory the pool holds now.
func (pl *Pool) Bytes() int64 {
	if pl == nil {
		return 0
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.bytes
}

// take returns a zeroed dense tensor of the shape and dtype, from the pool where it has a
// buffer of that size, and the backing slice to release later; nil for a scalar or another
// dtype (the op then allocates as it would without a pool).
func (pl *Pool) take(dt tensor.Dtype, shape tensor.Shape) (*tensor.Dense, any) {
	if len(shape) == 0 || (dt != tensor.Float32 && dt != tensor.Float64) {
		return nil, nil
	}
	key := poolKey{f32: dt == tensor.Float32, n: shape.TotalSize()}
	var buf any
	pl.mu.Lock()
	if list := pl.free[key]; len(list) > 0 {
		buf = list[len(list)-1]
		pl.free[key] = list[:len(list)-1]
		pl.bytes -= key.bytes()
	}
	pl.mu.Unlock()
	switch b := buf.(type) {
	case []float32:
		clear(b)
	case []float64:
		clear(b)
	case nil:
		if key.f32 {
			buf = make([]float32, key.n)
		} else {
			buf = make([]float64, key.n)
		}
	}
	return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(buf)), buf
}

func (k poolKey) bytes() int64 {
	if k.f32 {
		return 4 * int64(k.n)
	}
	return 8 * int64(k.n)
}

// put keeps buf (a []float32 or []float64) while the pool has room for it.
func (pl *Pool) put(buf any) {
	var key poolKey
	switch b := buf.(type) {
	case []float32:
		key = poolKey{f32: true, n: len(b)}
	case []float64:
		key = poolKey{n: len(b)}
	default:
		return
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.bytes+key.bytes() > pl.max {
		return
	}
	pl.free[key] = append(pl.free[key], buf)
	pl.bytes += key.bytes()
}

// Dense returns a zeroed tensor of the dtype and shape, from the pool where it has a buffer of
// that size; give it back with Put once nothing reads it. A nil pool, a scalar shape or a
// dtype other than float32 and float64 allocate one with tensor.New.
func (pl *Pool) Dense(dt tensor.Dtype, shape ...int) *tensor.Dense {
	if pl != nil {
		if d, _ := pl.take(dt, tensor.Shape(shape)); d != nil {
			return d
		}
	}
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
}

// Float64s returns n zeroed float64s, from the pool where it has a buffer of that length; give
// them back with Put once nothing reads them. A nil pool allocates them.
func (pl *Pool) Float64s(n int) []float64 {
	if pl == nil || n <= 0 {
		return make([]float64, max(n, 0))
	}
	_, buf := pl.take(tensor.Float64, tensor.Shape{n})
	return buf.([]float64)
}

// Put gives back buffers that Dense or Float64s returned (*tensor.Dense or []float64), or any
// other float32 or float64 buffer no one reads any more; the pool keeps them while it has
// room. A nil pool, and a value of another kind, are ignored.
func (pl *Pool) Put(bufs ...any) {
	if pl == nil {
		return
	}
	for _, b := range bufs {
		if d, ok := b.(*tensor.Dense); ok && d != nil && !d.IsView() {
			b = d.Data()
		}
		pl.put(b)
	}
}

// UsePool makes p take the result buffers of its first run from pool (nil: allocate them, as
// without a call) and hand them back at Release.
func (p *Program) UsePool(pool *Pool) {
	if p != nil {
		p.pool = pool
	}
}

// poolDst is the destination of node i's first computation: a buffer from p's pool, or nil
// (the op allocates) without one.
func (p *Program) poolDst(i int) G.Value {
	if p.pool == nil || p.vals[i] != nil {
		return p.vals[i]
	}
	n := p.nodes[i]
	d, buf := p.pool.take(n.Dtype(), n.Shape())
	if d == nil {
		return nil
	}
	p.taken = append(p.taken, buf)
	return d
}

// Release hands the buffers p took from its pool back to it and leaves p unusable: its
// methods then fail as a nil Program's. A value read from p before (Value) must not be used
// after: the pool gives its memory to the next program. Without a pool it only disables p.
func (p *Program) Release() {
	if p == nil || p.index == nil {
		return
	}
	p.pool.Put(p.taken...)
	*p = Program{}
}
