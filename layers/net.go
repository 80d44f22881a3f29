package layers

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Param is a named tensor bound to an input node of a Net's graph. Optimizers update Value in
// place; every program built on the graph sees the new values on its next run.
type Param struct {
	Name  string
	Node  *G.Node
	Value *tensor.Dense
}

// Size is the number of elements of the parameter.
func (p *Param) Size() int { return p.Value.Shape().TotalSize() }

// Net owns a graph, the parameters of the model built on it, and its non-trainable state.
type Net struct {
	g      *G.ExprGraph
	dt     tensor.Dtype
	rng    *rand.Rand
	params []*Param
	names  map[string]bool
	serial int
}

// NewNet starts an empty network of the given dtype (float32 or float64) whose parameter
// initializations are drawn, in creation order, from a generator seeded with seed.
func NewNet(dt tensor.Dtype, seed uint64) (*Net, error) {
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("layers: dtype %v; want float32 or float64", dt)
	}
	return &Net{g: G.NewGraph(), dt: dt, rng: rand.New(rand.NewPCG(seed, 0x5eed)), names: map[string]bool{}}, nil
}

// Graph is the net's expression graph.
func (n *Net) Graph() *G.ExprGraph { return n.g }

// Dtype is the net's element type.
func (n *Net) Dtype() tensor.Dtype { return n.dt }

// Params lists the trainable parameters in creation order.
func (n *Net) Params() []*Param { return append([]*Param(nil), n.params...) }

// ParamNodes lists the trainable parameters' nodes in creation order.
func (n *Net) ParamNodes() []*G.Node {
	out := make([]*G.Node, len(n.params))
	for i, p := range n.params {
		out[i] = p.Node
	}
	return out
}

// errNilNet is the error of a constructor given a nil Net, or one not made by NewNet.
var errNilNet = errors.New("layers: a nil Net, or one not made by NewNet")

// NumParams is the total number of trainable scalars.
func (n *Net) NumParams() int {
	total := 0
	for _, p := range n.params {
		total += p.Size()
	}
	return total
}

// Param creates a trainable parameter with a unique name, initialized by init.
func (n *Net) Param(name string, shape []int, init Init) (*Param, error) {
	p, err := n.tensor(name, shape, init)
	if err != nil {
		return nil, err
	}
	n.params = append(n.params, p)
	return p, nil
}

// State creates a named non-trainable tensor bound to an input node (running statistics,
// hyperparameters).
func (n *Net) State(name string, shape []int, init Init) (*Param, error) {
	return n.tensor(name, shape, init)
}

func (n *Net) tensor(name string, shape []int, init Init) (*Param, error) {
	if n == nil || n.g == nil {
		return nil, errNilNet
	}
	if n.names[name] {
		return nil, fmt.Errorf("layers: duplicate name %q", name)
	}
	for _, d := range shape {
		if d <= 0 {
			return nil, fmt.Errorf("layers: %s has shape %v", name, shape)
		}
	}
	if init == nil {
		init = Zeros
	}
	n.names[name] = true
	data := init(n.rng, shape)
	v := ownTensor(n.dt, data, shape)
	node := G.NewTensor(n.g, n.dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	return &Param{Name: name, Node: node, Value: v}, nil
}

// NewTensor copies data into a tensor of the dtype and shape, the value to bind (G.Let,
// graph.Program.Let) to an input node or to give a parameter: a float32 net needs its data
// converted, and a copy keeps the caller's slice from aliasing the graph's value.
func NewTensor(dt tensor.Dtype, data []float64, shape ...int) *tensor.Dense {
	if dt == tensor.Float32 {
		return ownTensor(dt, data, shape)
	}
	return ownTensor(dt, append([]float64(nil), data...), shape)
}

// ownTensor is NewTensor for data the net owns (a fresh initialization or mask), which a
// float64 tensor then uses without a copy.
func ownTensor(dt tensor.Dtype, data []float64, shape []int) *tensor.Dense {
	if dt == tensor.Float32 {
		f := make([]float32, len(data))
		for i, e := range data {
			f[i] = float32(e)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

// Input creates a data placeholder (a batch of inputs or targets) with a unique name derived
// from name; bind values to it with gorgonia.Let or graph.Program.Let.
func (n *Net) Input(name string, shape ...int) *G.Node {
	name = n.unique(name)
	n.names[name] = true
	return G.NewTensor(n.g, n.dt, len(shape), G.WithShape(shape...), G.WithName(name))
}

// unique returns name with a suffix that no node of the net has yet (gorgonia merges input
// nodes of the same name); the caller registers it.
func (n *Net) unique(name string) string {
	for {
		n.serial++
		if cand := fmt.Sprintf("%s#%d", name, n.serial); !n.names[cand] {
			return cand
		}
	}
}

// Mode says whether a forward pass trains (batch statistics, dropout) or evaluates.
type Mode int

const (
	// Train uses batch statistics in batch-norm and applies dropout.
	Train Mode = iota
	// Eval uses running statistics and no dropout.
	Eval
)

// Pass is one forward pass through a model. In training mode it collects the dropout masks to
// draw before every run (Draw) and the batch statistics to fold into the running averages after
// it (Update; compile StatNodes together with the loss so that they are computed).
type Pass struct {
	Mode  Mode
	masks []mask
	stats []statUpdate
}

type mask struct {
	node *G.Node
	val  *tensor.Dense
	keep float64
}

type statUpdate struct {
	bn         *BatchNorm
	mean, vari *G.Node
	count      int // elements per feature in the batch, for the unbiased variance
}

// NewPass starts a forward pass in the given mode.
func NewPass(m Mode) *Pass { return &Pass{Mode: m} }

// Training reports whether the pass trains.
func (p *Pass) Training() bool { return p != nil && p.Mode == Train }

// Dropout reports whether the pass has dropout masks to draw.
func (p *Pass) Dropout() bool { return p != nil && len(p.masks) > 0 }

// StatNodes are the batch statistics that Update reads; compile them with the loss.
func (p *Pass) StatNodes() []*G.Node {
	var out []*G.Node
	for _, s := range p.stats {
		out = append(out, s.mean, s.vari)
	}
	return out
}

// Draw fills every dropout mask of the pass with fresh draws from rng.
func (p *Pass) Draw(rng *rand.Rand) error {
	for _, m := range p.masks {
		switch d := m.val.Data().(type) {
		case []float64:
			for i := range d {
				d[i] = float64(b2i(rng.Float64() < m.keep))
			}
		case []float32:
			for i := range d {
				d[i] = float32(b2i(rng.Float64() < m.keep))
			}
		default:
			return fmt.Errorf("layers: dropout mask of type %T", d)
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Update folds the batch statistics computed by the last run of prog into each batch-norm
// layer's running averages.
func (p *Pass) Update(prog *graph.Program) error {
	for _, s := range p.stats {
		mean, err := prog.Float64s(s.mean)
		if err != nil {
			return err
		}
		vari, err := prog.Float64s(s.vari)
		if err != nil {
			return err
		}
		if err := s.bn.fold(mean, vari, s.count); err != nil {
			return err
		}
	}
	return nil
}

func (p *Pass) addMask(n *Net, shape []int, keep float64) (*G.Node, error) {
	v := ownTensor(n.dt, make([]float64, tensor.Shape(shape).TotalSize()), shape)
	name := n.unique("dropout.mask")
	n.names[name] = true
	node := G.NewTensor(n.g, n.dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	p.masks = append(p.masks, mask{node: node, val: v, keep: keep})
	// Until the first Draw, keep everything (a deterministic, usable default).
	if err := fill(v, 1); err != nil {
		return nil, err
	}
	return node, nil
}

func fill(v *tensor.Dense, c float64) error {
	switch d := v.Data().(type) {
	case []float64:
		for i := range d {
			d[i] = c
		}
	case []float32:
		for i := range d {
			d[i] = float32(c)
		}
	default:
		return fmt.Errorf("layers: tensor of type %T", d)
	}
	return nil
}

// Rebind builds with the net's parameters standing for other nodes: while build runs, every
// layer reads nodes[i] where it would read the i-th parameter's node, so that the model can be
// applied at computed parameters (an unrolled optimizer step θ − η∇L, for instance). nodes
// must match Params in number and shapes.
func (n *Net) Rebind(nodes []*G.Node, build func() error) error {
	if len(nodes) != len(n.params) {
		return fmt.Errorf("layers: Rebind with %d nodes for %d parameters", len(nodes), len(n.params))
	}
	for i, p := range n.params {
		if nodes[i] == nil || !nodes[i].Shape().Eq(p.Node.Shape()) {
			return fmt.Errorf("layers: Rebind of %s (shape %v) to a node of another shape", p.Name, p.Node.Shape())
		}
	}
	saved := make([]*G.Node, len(n.params))
	for i, p := range n.params {
		saved[i], p.Node = p.Node, nodes[i]
	}
	defer func() {
		for i, p := range n.params {
			p.Node = saved[i]
		}
	}()
	return build()
}
