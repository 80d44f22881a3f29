package graph_test

import (
	"context"
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The gradient of a gradient: for f(θ, λ) = Σ(xθ)² + λ‖θ‖², the squared gradient norm
// ‖∇_θ f‖² differentiated with respect to the hyperparameter λ.
func ExampleGrad() {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 0, 0, 2}))))
	theta := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 1), G.WithName("theta"),
		G.WithValue(tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float64{1, 1}))))
	lambda := G.NewScalar(g, tensor.Float64, G.WithName("lambda"), G.WithValue(0.5))

	xt, _ := graph.MatMul(x, theta)
	fit, _ := graph.SquaredNorm(xt)
	pen, _ := graph.SquaredNorm(theta)
	pen, _ = graph.Mul(lambda, pen)
	f, _ := graph.Add(fit, pen)

	grads, _ := graph.Grad(f, theta)            // ∇_θ f = 2XᵀXθ + 2λθ = (3, 9)
	norm, _ := graph.SquaredNorm(grads[0])      // ‖∇_θ f‖² = 90
	dNorm, _ := graph.Grad(norm, lambda, theta) // ∂/∂λ = 2⟨∇_θ f, 2θ⟩ = 48; ∂/∂θ = 4(XᵀX+λI)∇_θ f = (18, 162)

	prog, _ := graph.Compile(norm, dNorm[0], dNorm[1])
	if err := prog.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	n, _ := prog.Scalar(norm)
	dl, _ := prog.Scalar(dNorm[0])
	dt, _ := prog.Float64s(dNorm[1])
	fmt.Printf("‖∇θ f‖² = %g, ∂/∂λ = %g, ∂/∂θ = %v\n", n, dl, dt)
	// Output: ‖∇θ f‖² = 90, ∂/∂λ = 48, ∂/∂θ = [18 162]
}
