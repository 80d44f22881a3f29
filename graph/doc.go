// Package graph is where hyperflat differentiates: reverse-mode symbolic differentiation of
// gorgonia expression graphs that is correct to any order, the differentiable ops models are
// built from, a compiled-program executor, and gradient checkers.
//
// Everything else in hyperflat — the Fisher-distance regularizer, hypergradients, Hessian
// measures of flatness — differentiates gradients, and gorgonia v0.9.18 cannot do that
// correctly on its own: gorgonia.Grad caches derivatives on the nodes (so a second Grad is
// silently wrong), several of its ops have wrong or non-re-differentiable gradients, and its
// TapeMachine can alias values. This package fixes all of it in one place; no other package of
// hyperflat calls gorgonia.Grad or those ops.
//
// # Differentiation as composable transforms
//
// Grad(cost, wrt...) returns gradient nodes in the same graph. It can be called any number of
// times, with respect to any nodes (parameters, hyperparameter nodes, intermediate nodes), and
// on its own results, so grad-of-grad works to any order. VJP takes explicit cotangents; HVP
// is a Hessian-vector product by double backpropagation; MixedVJP is ∂/∂λ ⟨∇_θ f, v⟩, the
// mixed second derivative hypergradients need.
//
// # Ops
//
// MatMul/MatMulT, broadcasting Add/Sub/Mul/Div, Neg, ReLU, Tanh, Sigmoid, Softplus, Exp, Log,
// Square, Sqrt, Affine/Scale, Sum/Mean (over axes, optionally keeping them), BroadcastTo,
// Reshape, Transpose, Concat, Slice, Softmax, LogSoftmax, LogSumExp, CrossEntropy,
// Im2Col/Col2Im, Conv2d, MaxPool2d, AvgPool2d, BatchNorm (training and inference), Dropout with
// an explicit mask, and StopGradient. Each is differentiable to any order (its VJP is built of these same
// ops), works in float32 and float64, and is listed in OpCases with inputs for the checkers.
// Grad also differentiates gorgonia's own elementwise and matrix ops through their SymDiff,
// except those known to be wrong in v0.9.18, which it refuses with the name of the op here
// that replaces them.
//
// # Running graphs
//
// Compile(outputs...) returns a Program: build once, bind new inputs each step, Run, read any
// compiled node. Each node owns its result buffer, reused across runs, so values never alias
// and memory stays flat over any number of runs.
//
// NewInput adds an input node that is always a new one. gorgonia.NewTensor is not: it returns
// an existing input of the same name, type and shape, still bound to that input's value, so
// two Hessian-vector products built on one loss with equally named direction nodes would share
// one direction. Inputs that belong to one consumer (directions, cotangents) are made with it.
//
// # Checking derivatives
//
// GradCheck and GradGradCheck compare first and second derivatives with finite differences in
// float64, like PyTorch's gradcheck and gradgradcheck. A user who writes an op of their own
// implements Differentiable and checks it with them; "hyperflat check" runs them over every op.
//
// Matrix products use this package's AVX2/FMA kernels where they are faster, and otherwise
// gonum's pure-Go BLAS, or OpenBLAS when built with -tags openblas. A product whose left
// operand is at most 1/16 nonzero (a batch of one-hot rows, and its transpose in the weight
// gradient) is computed from that operand's nonzeros, each output summed in the order of its
// terms; HYPERFLAT_SPARSE=off turns this off, for comparisons.
package graph
