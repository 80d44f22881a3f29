package graph

// Broadcast operands of fused kernels: how a kernel reads an operand repeated along runs of
// its output (a bias row, a channel's value over a plane) and expands it into a register.

// leafPattern is how a fused kernel reads a broadcast operand: over the kernel's flat index
// space, runs of run elements read the operand at consecutive positions (inner = 1) or at
// one position (inner = 0); run r starts at Σ_d idx_d(r)·stride_d over the outer dims.
type leafPattern struct {
	run, inner     int
	outer, strides []int
}

// bcastPattern is the pattern of operand j of binary op b.
func bcastPattern(b *binaryOp, j int) leafPattern {
	st := b.sa
	if j == 1 {
		st = b.sb
	}
	nd := len(b.out)
	if nd == 0 {
		return leafPattern{}
	}
	// coalesce as walk does, innermost first
	shape := []int{b.out[nd-1]}
	strides := []int{st[nd-1]}
	for d := nd - 2; d >= 0; d-- {
		last := len(shape) - 1
		if st[d] == strides[last]*shape[last] {
			shape[last] *= b.out[d]
			continue
		}
		shape = append(shape, b.out[d])
		strides = append(strides, st[d])
	}
	l := leafPattern{run: shape[0], inner: strides[0]}
	if l.inner != 0 && l.inner != 1 {
		return leafPattern{}
	}
	for d := len(shape) - 1; d >= 1; d-- { // outer dims, outermost first
		l.outer = append(l.outer, shape[d])
		l.strides = append(l.strides, strides[d])
	}
	return l
}

// offset is where the run containing flat index i starts reading, plus i's place in it.
func (l *leafPattern) offset(i int) int {
	r, in := i/l.run, i%l.run
	off := in * l.inner
	for d := len(l.outer) - 1; d >= 0; d-- {
		off += (r % l.outer[d]) * l.strides[d]
		r /= l.outer[d]
	}
	return off
}

// expandPattern sets dst to the operand's values at flat indices s … e−1 of the kernel's domain, a run
// at a time, stepping the outer dims as an odometer.
func expandPattern[T Float](l *leafPattern, src []T, s, e int, dst []T) {
	nd := len(l.outer)
	var idx [8]int
	if nd > len(idx) {
		for i := s; i < e; i++ {
			dst[i-s] = src[l.offset(i)]
		}
		return
	}
	if l.inner == 0 && nd == 2 && l.strides[0] == 0 {
		// a channel's value over its map, image after image (batch norm's statistics and
		// parameters): the channel counts up and wraps, without the odometer's bookkeeping,
		// which on 2×2 and 1×1 maps cost more than the stores
		C, st := l.outer[1], l.strides[1]
		c, in := (s/l.run)%C, s%l.run
		for i := s; i < e; {
			n := min(l.run-in, e-i)
			out := dst[i-s:][:n]
			if v := src[c*st]; n >= 16 {
				fill(out, v)
			} else {
				for j := range out {
					out[j] = v
				}
			}
			i, in = i+n, 0
			if c++; c == C {
				c = 0
			}
		}
		return
	}
	base, r := 0, s/l.run
	for d := nd - 1; d >= 0; d-- {
		idx[d] = r % l.outer[d]
		base += idx[d] * l.strides[d]
		r /= l.outer[d]
	}
	in := s % l.run
	for i := s; i < e; {
		n := min(l.run-in, e-i)
		out := dst[i-s:][:n]
		if l.inner == 0 {
			fill(out, src[base])
		} else {
			copy(out, src[base+in:])
		}
		i, in = i+n, 0
		for d := nd - 1; d >= 0; d-- {
			idx[d]++
			base += l.strides[d]
			if idx[d] < l.outer[d] {
				break
			}
			base -= l.strides[d] * l.outer[d]
			idx[d] = 0
		}
	}
}
