// Package layers builds neural networks as gorgonia graphs that stay differentiable to any
// order: Linear, MLP, Conv2d, pooling, BatchNorm, Dropout, Flatten, ResNet BasicBlocks,
// ResNet-18/34, and the AHSC paper's MNIST and SVHN ConvNets; plus hyperparameters that live in
// the graph (weight decay per element, per tensor or shared) so that graph.Grad can
// differentiate with respect to them.
//
// A Net owns one graph, its parameters (named, seeded initialization) and its state (batch-norm
// running statistics). Layers are built on a Net and applied with Forward(x, pass): a Pass says
// whether the forward pass trains or evaluates and collects what a training pass needs besides
// parameters — dropout masks to draw before each run, and batch statistics to fold into the
// running averages after it.
//
// Any type that implements Model — logits from an input node, parameters from its Net — works
// with the optimizers, training loop and hypergradients of hyperflat; FeatureModel adds the
// penultimate activations and last-layer kernel that AHSC's strong-convexity estimate reads.
package layers
