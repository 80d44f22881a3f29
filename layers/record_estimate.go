package layers

import (
	"math/bits"

	"gorgonia.org/tensor"
)

// RecordRows are the rows the white-box record of a training (convexity.Task.Whitebox)
// computes on, which its memory grows with: the training risk's curvature on the first Train
// rows of the training split and the validation risk's gradient on the first Val rows of the
// validation split (convexity.WhiteboxOptions.Rows clipped to each split; Val 0 for a task
// that validates on its training data, which records no gradient there), and μ's forward
// passes over the N training rows in consecutive batches of Batch rows (the configuration's
// batch size; 0 or more than N: one batch of N). convexity.Task.RecordRows computes them.
type RecordRows struct {
	Train, Val int
	N, Batch   int
}

// muRows is the rows of μ's programs: one of the batch size and one of the last, partial
// batch when the batch size does not divide N.
func (r RecordRows) muRows() int64 {
	n, b := int64(max(r.N, 0)), int64(r.Batch)
	if b <= 0 || b > n {
		b = n
	}
	if b == 0 {
		return 0
	}
	return b + n%b
}

// What the record's programs hold per parameter, per example and per unit: the counts of
// the buffers of graph.Program's nodes that the record compiles on this package's models
// (one per node computed and not fused into its consumer), read off the programs of MLPs and
// of both convnets whose layers had distinct widths, so that a buffer's shape told its layer.
// The curvature's program computes the training risk, its gradient and the Hessian-vector
// product by double backpropagation (graph.HVP): per example, 11 buffers of every hidden
// layer's width (the activations, their directional derivatives R{·} and the backward and
// second-backward passes' intermediates), 21 of the logits' (15 to 21 seen; 27 after the
// SVHN convnet's final dropout, a few hundred bytes a row left to the margin) and 10 of one
// column (softmax and loss reductions); per parameter, besides the parameter itself, the
// direction it is multiplied by and up to 6 products and sums (the gradient, the product's
// output and their intermediates; 3 for the first layer's weights, whose input is data).
// The validation gradient's program holds 4 per hidden unit, 9 per logit, 5 columns and one
// gradient per parameter; μ's programs 3 per hidden unit, 6 per logit and 5 columns. Each
// program also holds its input rows and one-hot labels (in the model's float type: the
// record copies them out of the split). Convolutions are counted as the hidden layers are,
// per element of each feature map: 9 (12 for one followed by batch normalization) for a
// convolution's output in the curvature's program and 5 in the gradient's, 7 and 3 for a
// pooled map (with its dropout), 6 and 2 for the flattened features; μ's programs hold 2 of
// a convolution's or a pooled map and 1 of the flattened features.
const (
	recHiddenHVP, recHiddenGrad, recHiddenMu = 11, 4, 3
	recLogitHVP, recLogitGrad, recLogitMu    = 21, 9, 6
	recColsHVP, recColsGrad, recColsMu       = 10, 5, 5
	recParamHVP, recFirstHVP                 = 7, 4 // the direction and up to 6 (3) more

	recConvHVP, recConvBNHVP, recConvGrad, recConvMu = 9, 12, 5, 2
	recPoolHVP, recPoolGrad, recPoolMu               = 7, 3, 2
	recFlatHVP, recFlatGrad, recFlatMu               = 6, 2, 1
)

// lanczosVectors is the float64 vectors of the parameter count that the record's Lanczos
// iteration and Hutchinson probes hold at once (convexity's traceAndTop): the probe or
// Lanczos vector, its product and the previous vector.
const lanczosVectors = 3

// recordSafety is what the record's estimates multiply their bytes by. Its counts are of
// the buffers the record's programs really hold, read off them, and came within 10% of the
// heap a record holds at its peak (convexity's TestRecordEstimatesMatchMeasuredMemory), so a
// smaller margin than the training's EstimateSafety: it covers the graph's bookkeeping of
// the nodes the record adds (about 0.1 MB a layer), the products' and convolutions'
// workspaces and shapes whose buffer counts differ from the constants above.
const recordSafety = 1.25

// recordBytes turns a record's counts into bytes: elems of the model's float type (params
// of them the parameters, for the validation gradient when val is set) and the Lanczos
// vectors in float64, times recordSafety.
func recordBytes(elems, params int64, val bool, dtype tensor.Dtype) int64 {
	if val {
		elems += params
	}
	b := elems*dtypeSize(dtype) + lanczosVectors*params*8
	return int64(float64(b) * recordSafety)
}

// EstimateMLPRecordBytes estimates the bytes the white-box record of one training of
// NewMLP's MLP (in inputs, hidden widths, out logits) adds to the training's
// (EstimateMLPBytes) at its peak, the curvature's estimates, in dtype: the programs it
// compiles on the model's graph — the training risk with its gradient and Hessian-vector
// product on rows.Train rows, the validation risk's gradient on rows.Val rows, μ's forward
// passes in batches — counted per parameter, per example and per unit as the constants above
// say; the three float64 vectors of the parameter count of its Lanczos iteration; times
// recordSafety (1.25). For a one-hot table of thousands of columns the first layer's weights
// make it several times the training's estimate: each weight has its direction, 3 products
// and sums, a validation gradient and 24 bytes of Lanczos vectors.
//
// Not counted: the buffers the record's pool keeps between trials (convexity keeps up to
// 256 MiB of them for the next record, process-wide, not per trial).
func EstimateMLPRecordBytes(in int, hidden []int, out int, rows RecordRows, dtype tensor.Dtype) int64 {
	var params, first, units int64
	prev := int64(in)
	for i, h := range hidden {
		if i == 0 {
			first = prev * int64(h)
		}
		params += prev*int64(h) + int64(h)
		units += int64(h)
		prev = int64(h)
	}
	if len(hidden) == 0 {
		first = prev * int64(out)
	}
	params += prev*int64(out) + int64(out)
	d, o := int64(in), int64(out)
	elems := int64(rows.Train)*(d+o+recHiddenHVP*units+recLogitHVP*o+recColsHVP) +
		recParamHVP*params - (recParamHVP-recFirstHVP)*first
	if rows.Val > 0 {
		elems += int64(rows.Val) * (d + o + recHiddenGrad*units + recLogitGrad*o + recColsGrad)
	}
	elems += rows.muRows() * (d + o + recHiddenMu*units + recLogitMu*o + recColsMu)
	return recordBytes(elems, params, rows.Val > 0, dtype)
}

// EstimateConvNetRecordBytes is EstimateMLPRecordBytes for NewMNISTConvNet's model (svhn
// false) or NewSVHNConvNet's (svhn true): the convolutions' maps counted per element as the
// constants above say, plus two column workspaces of the convolutions over rows.Train images
// (graph's, at most 2^20 elements each, rounded up to a power of two: the record's batches
// are larger than training's). An architecture that NewMNISTConvNet or
// NewSVHNConvNet would refuse estimates to 0.
func EstimateConvNetRecordBytes(cfg ConvNetConfig, svhn bool, rows RecordRows, dtype tensor.Dtype) int64 {
	if !estimable(&cfg, svhn) {
		return 0
	}
	k2 := int64(cfg.Kernel * cfg.Kernel)
	var params, hvp, grad, mu, cols int64 // per example: the three kinds of programs' elements
	c, h, w := int64(cfg.InChannels), cfg.Height, cfg.Width
	in := c * int64(h*w)
	conv := func(from, to int64, bn bool) {
		h, w = convOut(h, w, cfg.Kernel, cfg.Padding)
		params += to*from*k2 + to
		m := to * int64(h*w)
		hvp += recConvHVP * m
		if bn {
			hvp += (recConvBNHVP - recConvHVP) * m
		}
		grad += recConvGrad * m
		mu += recConvMu * m
		cols = max(cols, from*k2*int64(h*w))
	}
	for i := 0; i < cfg.Blocks; i++ {
		f := int64(cfg.Filters)
		if svhn {
			f = int64(cfg.Filters) << i
			conv(c, f, true)
			params += 4 * f
			conv(f, f, false)
		} else {
			conv(c, f, false)
		}
		if h <= 0 || w <= 0 || h/2 <= 0 || w/2 <= 0 {
			return 0
		}
		h, w = h/2, w/2
		hvp += recPoolHVP * f * int64(h*w)
		grad += recPoolGrad * f * int64(h*w)
		mu += recPoolMu * f * int64(h*w)
		c = f
	}
	units := int64(128)
	if svhn {
		units = int64(cfg.Units)
	}
	flat, o := c*int64(h*w), int64(cfg.Classes)
	params += flat*units + units + units*o + o
	hvp += in + o + recFlatHVP*flat + recHiddenHVP*units + recLogitHVP*o + recColsHVP
	grad += in + o + recFlatGrad*flat + recHiddenGrad*units + recLogitGrad*o + recColsGrad
	mu += in + o + recFlatMu*flat + recHiddenMu*units + recLogitMu*o + recColsMu
	elems := int64(rows.Train)*hvp + recParamHVP*params + rows.muRows()*mu
	if rows.Val > 0 {
		elems += int64(rows.Val) * grad
	}
	// a block's column workspace and its product's, in graph's power-of-two size classes
	block := min(int64(rows.Train)*cols, convBlockElems)
	elems += 2 << bits.Len64(uint64(max(block-1, 0)))
	return recordBytes(elems, params, rows.Val > 0, dtype)
}

// convBlockElems is graph's bound on a convolution's column block (its convBlockElems).
const convBlockElems = 1 << 20
