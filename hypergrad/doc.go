// Package hypergrad optimizes hyperparameters by gradient: the PAC-Bayes bound minimization of
// Cherian et al. (2020) and the hypergradient estimators it builds on, for any bilevel problem
// whose losses are graphs (a model from package layers, or a user's own).
//
// # The problem
//
// Parameters θ and hyperparameters λ are input nodes of one graph. The inner problem trains θ on
// the training objective L_T(θ, λ); the outer problem picks λ to minimize the validation
// objective C(θ, λ), in the paper's three forms:
//
//	Eq. 1  C(θ_T)                                    validation risk at the trained parameters
//	Eq. 6  E_c C(θ_T^c)                              its mean over sampler chains c
//	Eq. 7  E_c C(θ_T^c) + ζ Σ_t d_{2,ν_t}            plus the (2,ν_t)-Fisher distances
//
// where, with Gibbs posteriors p¹ ∝ exp(−R̂), the (2,ν_t)-Fisher distance between the
// training and validation posteriors at iterate θ_t is the norm of the gradient difference
//
//	d_t = ‖a_t‖,  a_t = ∇_θ R̂_T(θ_t; S_T^(t), λ) − ∇_θ R̂_V(θ_t; S_V^(t), λ)
//
// (Eq. 5b with the Gibbs posteriors of Eq. 2 at τ = 1, whose score is −∇_θR̂: the "gradient
// incoherence" reading of Eq. 7 in the paper). The regularizer comes in the two forms of the
// paper and its code (DEShawResearch/PACBayesHyperOpt): the sum ζ Σ_t ‖a_t‖ (Eq. 7 as written;
// the online algorithm C.3 of weight_decay/weight_decay.py steps λ on each term) and the square
// root ζ √(Σ_t ‖a_t‖²) (what the offline variants of weight_decay.py, and freedman/freedman.py,
// optimize: the KL bound of Section 2.4 before the triangle inequality relaxes it to the sum).
//
// # Hypergradients
//
// Every estimator is derived by graph differentiation (package graph), never by hand:
//
//   - Unrolled(K): backpropagation through K steps θ_{k+1} = θ_k − η ∇_θ L_T(θ_k, λ) of plain
//     gradient descent; K = 0 keeps only C's direct dependence on λ, and K = 1 is T1–T2
//     (Luketina et al. 2016): ∇_λ C(θ_{t+1}) = ∂_λ C − η (∂²L_T/∂λ∂θ)ᵀ ∇_θ C(θ_{t+1}).
//   - NewT1T2AtCurrent: the same with ∇_θ C read at the current θ_t instead of θ_{t+1}, as
//     weight_decay.py computes it (an Implicit whose H⁻¹ is η·I); Bilevel.T1T2 picks either.
//   - Implicit: the implicit-function-theorem gradient at a stationary θ (Lorraine et al.
//     2019), ∂_λ C − (∂²L_T/∂λ∂θ)ᵀ H⁻¹ ∇_θ C with H = ∇²_θ L_T, the inverse Hessian-vector
//     product by conjugate gradients or a Neumann series on graph Hessian-vector products.
//   - The regularizer's K = 0 gradient, ∇_λ ½‖a_t‖² = (∂a_t/∂λ)ᵀ a_t at fixed θ_t: Algorithm 1
//     with K = 0, as Section 4.2 applies it (compute_auxiliary in weight_decay.py, which
//     accumulates θ_t ⊙ a_t for per-entry weight decay).
//
// Bilevel runs Algorithm 1 (Section 3; run_fit in weight_decay.py): inner steps by any
// optimizer or Langevin sampler from package samplers, decoupled or coupled weight decay, the
// T1–T2 risk hypergradient at the end of every hyper-step, the regularizer accumulated offline
// or applied online, and an outer optimizer (RMSprop in the paper) on λ.
package hypergrad
