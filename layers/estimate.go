package layers

import (
	"runtime"

	"gorgonia.org/tensor"
)

// EstimateSafety is the factor the Estimate functions multiply their element count by. The
// count covers the tensors a training step holds — parameters, their gradients, Adam's two
// moment buffers, every forward activation and its gradient, and the convolutions' im2col
// workspaces — but not the graph's own bookkeeping, the backward pass's smaller temporaries,
// nor the forward-only programs a Trainer compiles for evaluation and for a last partial
// batch; 1.5 covers those. The tests hold the estimates to between 0.8 and 2 times the heap a
// model really retains after one Adam training step (the graph built, compiled and run).
const EstimateSafety = 1.5

// dtypeSize is the bytes of one element of dt (8 for anything but float32).
func dtypeSize(dt tensor.Dtype) int64 {
	if dt == tensor.Float32 {
		return 4
	}
	return 8
}

// paramElems is what training holds per parameter element: the value, its gradient and
// Adam's first and second moments (SGD with momentum and RMSprop hold less).
const paramElems = 4

// EstimateMLPBytes estimates the bytes one training of NewMLP's MLP (in inputs, hidden
// widths, out logits) holds at batch size batch in dtype: paramElems (4: value, gradient, two
// Adam moments) times the parameters, plus per example the input, each layer's
// pre-activation and activation, the logits, the labels and the softmax, all twice (forward
// values and their gradients), times the dtype's size and EstimateSafety.
func EstimateMLPBytes(in int, hidden []int, out, batch int, dtype tensor.Dtype) int64 {
	var params, act int64
	prev := int64(in)
	act += prev // the input batch
	for _, h := range hidden {
		params += prev*int64(h) + int64(h)
		act += 2 * int64(h) // pre-activation and activation
		prev = int64(h)
	}
	params += prev*int64(out) + int64(out)
	act += 3 * int64(out) // logits, labels, softmax
	elems := paramElems*params + 2*int64(batch)*act
	return int64(float64(elems*dtypeSize(dtype)) * EstimateSafety)
}

// EstimateConvNetBytes estimates the bytes one training of NewMNISTConvNet's model (svhn
// false) or NewSVHNConvNet's (svhn true) holds at batch size batch in dtype, counted as
// EstimateMLPBytes counts: parameters times paramElems; per example, every block's
// convolution outputs and activations, batch-norm intermediates (six maps), pooled maps and
// their argmax, dropout masks and outputs, the flattened features, the dense layer and the
// logits, twice (values and gradients); plus the
// im2col workspaces of the convolutions (one C·k²·OH·OW image per worker, up to GOMAXPROCS
// workers, for the forward pass and each of the two backward ones). An architecture that
// NewMNISTConvNet or NewSVHNConvNet would refuse estimates to 0.
func EstimateConvNetBytes(cfg ConvNetConfig, svhn bool, batch int, dtype tensor.Dtype) int64 {
	if !estimable(&cfg, svhn) {
		return 0
	}
	workers := int64(min(max(batch, 1), runtime.GOMAXPROCS(0)))
	k2 := int64(cfg.Kernel * cfg.Kernel)
	var params, act, ws int64
	c, h, w := int64(cfg.InChannels), cfg.Height, cfg.Width
	act += c * int64(h*w) // the input batch
	conv := func(in, out int64) {
		h, w = convOut(h, w, cfg.Kernel, cfg.Padding)
		params += out*in*k2 + out
		ohw := int64(h * w)
		act += 2 * out * ohw                          // output and activation
		ws = max(ws, workers*3*(in*k2*ohw)+out*in*k2) // im2col (forward, both backward), dw partials
	}
	for i := 0; i < cfg.Blocks; i++ {
		f := int64(cfg.Filters)
		if svhn {
			f = int64(cfg.Filters) << i
			conv(c, f)
			params += 4 * f // batch norm: γ, β and the running statistics
			// batch norm (graph.BatchNorm): the centred input, the normalized one and the
			// output are stored, each read again by the backward pass; the centring for the
			// variance, the squared deviations, the products its gradients sum per channel
			// (graph's fused per-channel sums) and γ·x̂, whose only reader adds β, are computed
			// inside fused kernels and never stored
			act += 3 * f * int64(h*w)
			conv(f, f)
		} else {
			conv(c, f)
		}
		if h <= 0 || w <= 0 || h/2 <= 0 || w/2 <= 0 {
			return 0
		}
		h, w = h/2, w/2
		act += 2 * f * int64(h*w) // pooled map and argmax
		if svhn {
			act += 2 * f * int64(h*w) // dropout mask and output
		}
		c = f
	}
	units := int64(128)
	if svhn {
		units = int64(cfg.Units)
	}
	flat := c * int64(h*w)
	params += flat*units + units + units*int64(cfg.Classes) + int64(cfg.Classes)
	act += flat + 2*units + 3*int64(cfg.Classes) // dense output and activation; logits, labels, softmax
	if svhn {
		act += 2 * units // dropout mask and output
	}
	elems := paramElems*params + 2*int64(batch)*act + ws
	return int64(float64(elems*dtypeSize(dtype)) * EstimateSafety)
}

// estimable fills cfg's defaults for the MNIST (svhn false) or SVHN convnet and reports
// whether the constructors would build it: the estimates of one they would refuse are 0.
func estimable(cfg *ConvNetConfig, svhn bool) bool {
	if svhn {
		defaults(cfg, 3, 32, 32)
	} else {
		defaults(cfg, 1, 28, 28)
	}
	return cfg.Filters > 0 && cfg.Kernel > 0 && cfg.Blocks > 0 && (!svhn || cfg.Units > 0)
}
