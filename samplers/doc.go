// Package samplers moves parameters: the optimizers and Langevin samplers of hyperflat's
// inner and outer loops.
//
// Parameters are *tensor.Dense values of one dtype, float32 or float64, updated in place:
// models bind them to graph input nodes (gorgonia.NewTensor(..., gorgonia.WithValue(θ))),
// so the next run of a graph.Program sees the update. Gradients are gorgonia.Values of
// the same shapes, such as graph.Program.Value returns. Every update checks its inputs
// first: a shape or dtype mismatch or a NaN or infinite gradient is an error naming the
// parameter, and changes nothing.
//
// # Optimizers
//
// SGD (momentum, Nesterov), Adam and RMSprop follow PyTorch's torch.optim semantics and
// defaults (NewAdam, NewRMSprop); all implement Optimizer, whose Step takes any list of
// parameters, a model's or the hyperparameter tensors λ of the outer loop. Their state is
// per parameter, in the parameters' dtype, sized on the first Step. DecoupledDecay is the
// decoupled weight decay θ ← θ − η·λ⊙θ that Cherian et al.'s inner loop applies after each
// Adam step.
//
// # Langevin samplers
//
// Langevin takes the step
//
//	θ ← θ − η·∇R̂(θ) + √(2η/(βn))·ξ,  ξ ~ N(0, I),
//
// with step size η, inverse temperature β and dataset size n, so that the stationary law
// is ∝ exp(−β·n·R̂(θ)) up to an O(η) discretization bias (for a quadratic R̂ of curvature k
// the stationary variance is 1/(βnk) · 1/(1 − ηk/2)). With the full-batch gradient it is
// Langevin dynamics (LD), with a mini-batch gradient SGLD. DPSGLD clips each example's
// gradient to norm L over all parameter tensors, averages over the batch and takes the
// same step.
//
// RunChains runs independent chains on a pool of goroutines and shows every iterate θ_t,
// t = 0, …, T, to a callback (the PAC-Bayes regularizer sums over all of them). Each chain
// owns a Problem (and so may own a compiled graph program) and a random source derived
// from (seed, chain index) by ChainRand; the order in which a chain draws from it is
// documented on RunChains and Langevin, so the same seed gives bit-identical chains
// whatever the number of workers. No randomness comes from anywhere else.
//
// # Privacy accounting
//
// Accountant bounds the (ε, δ)-differential privacy of T DP-SGLD steps by Rényi
// differential privacy (Mironov 2017) of the Gaussian mechanism, with no subsampling
// amplification. One step releases θ − η·ĝ + N(0, σ²I) with σ² = 2η/(βn); replacing one
// example moves the clipped batch mean ĝ by at most 2L/b, so the sensitivity is Δ = 2ηL/b
// and one step is (α, α·Δ²/(2σ²))-RDP for every α > 1. Composing T steps and converting,
//
//	ε(δ) = min over α > 1 of [ T·α·ρ + log(1/δ)/(α−1) ] = c + 2·√(c·log(1/δ)),
//	ρ = Δ²/(2σ²) = η·β·n·L²/b²,   c = T·ρ,   α* = 1 + √(log(1/δ)/c).
//
// This is for datasets differing in one replaced example, θ_0 drawn independently of the
// data, batches chosen without looking at it, and the data entering only through the
// clipped per-example gradients; releasing every iterate θ_1, …, θ_T is covered, since
// the composition is adaptive. Accountant.MaxEta inverts it into the step-size condition
// η ≤ (√(log(1/δ)+ε) − √(log(1/δ)))²·b²/(T·β·n·L²) ≈ ε²b²/(4·T·β·n·L²·log(1/δ)).
//
// Random batches amplify privacy. Accountant.SubsampledRDP and SubsampledEpsilon bound it
// for Poisson sampling by the Rényi DP of the sampled Gaussian mechanism (Mironov, Talwar &
// Zhang 2019; SampledGaussianRDP), under add/remove-one adjacency, and for fresh fixed-size
// batches by Theorem 9 of Wang, Balle & Kasiviswanathan (2019), under replace-one; see
// subsampled.go for the conditions each needs.
package samplers
