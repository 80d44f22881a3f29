package layers

import (
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// Init draws the initial values of a tensor of the given shape. Fans follow the layouts of this
// package: a Linear kernel is in×out, a Conv2d kernel F×C×KH×KW.
type Init func(rng *rand.Rand, shape []int) []float64

// fans returns fan-in and fan-out for a Linear (in×out) or convolution (F×C×KH×KW) kernel.
func fans(shape []int) (in, out int) {
	switch len(shape) {
	case 0:
		return 1, 1
	case 1:
		return shape[0], shape[0]
	case 2:
		return shape[0], shape[1]
	}
	receptive := 1
	for _, d := range shape[2:] {
		receptive *= d
	}
	return shape[1] * receptive, shape[0] * receptive
}

func uniform(bound float64) Init {
	return func(rng *rand.Rand, shape []int) []float64 {
		d := make([]float64, tensor.Shape(shape).TotalSize())
		for i := range d {
			d[i] = (2*rng.Float64() - 1) * bound
		}
		return d
	}
}

// Zeros initializes to 0.
func Zeros(_ *rand.Rand, shape []int) []float64 {
	return make([]float64, tensor.Shape(shape).TotalSize())
}

// Ones initializes to 1.
func Ones(rng *rand.Rand, shape []int) []float64 { return Constant(1)(rng, shape) }

// Constant initializes every element to c.
func Constant(c float64) Init {
	return func(_ *rand.Rand, shape []int) []float64 {
		d := make([]float64, tensor.Shape(shape).TotalSize())
		for i := range d {
			d[i] = c
		}
		return d
	}
}

// HeUniform is Keras's he_uniform: U(−√(6/fan_in), √(6/fan_in)).
func HeUniform(rng *rand.Rand, shape []int) []float64 {
	in, _ := fans(shape)
	return uniform(math.Sqrt(6/float64(in)))(rng, shape)
}

// GlorotUniform is Keras's default glorot_uniform: U(±√(6/(fan_in+fan_out))).
func GlorotUniform(rng *rand.Rand, shape []int) []float64 {
	in, out := fans(shape)
	return uniform(math.Sqrt(6/float64(in+out)))(rng, shape)
}

// TorchDefault is PyTorch's default for Linear and Conv2d weights and biases
// (kaiming_uniform with a=√5): U(±1/√fan_in), with fan_in taken from the weight shape
// weightShape (pass the layer's kernel shape when initializing its bias).
func TorchDefault(weightShape []int) Init {
	in, _ := fans(weightShape)
	return uniform(1 / math.Sqrt(float64(in)))
}

// KaimingNormalFanOut is torchvision's ResNet convolution initialization:
// N(0, 2/fan_out) (kaiming_normal_, mode="fan_out", nonlinearity="relu").
func KaimingNormalFanOut(rng *rand.Rand, shape []int) []float64 {
	_, out := fans(shape)
	std := math.Sqrt(2 / float64(out))
	d := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range d {
		d[i] = rng.NormFloat64() * std
	}
	return d
}
