package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ErrDiverged is wrapped by the error Step and Fit return when training has diverged: the batch
// loss is NaN or infinite, a gradient has a NaN or infinite entry (checked before the optimizer
// step, so the parameters keep their last finite values), a parameter has a NaN or infinite
// entry after the optimizer step (a finite gradient times a large learning rate can overflow),
// or the loss early stopping monitors is not finite. A search records such a trial as failed
// with the error's text, which names the quantity, the epoch and the batch.
var ErrDiverged = errors.New("training diverged")

// DecayMode says how a WeightDecay acts during training.
type DecayMode int

const (
	// Coupled adds ½ Σ λ θ² to the training loss.
	Coupled DecayMode = iota
	// Decoupled shrinks θ ← θ − LR·λ ⊙ θ after every optimizer step.
	Decoupled
)

// Decay attaches weight decay to training.
type Decay struct {
	WD   *layers.WeightDecay
	Mode DecayMode
	LR   float64 // the step size η of decoupled decay
}

// EarlyStopping stops training when the monitored loss has not improved by more than MinDelta
// for Patience epochs (Keras semantics).
type EarlyStopping struct {
	// Monitor is "val_loss" (the default when validation data is given) or "loss".
	Monitor  string
	Patience int
	MinDelta float64
	// RestoreBest puts back the trainable weights of the best epoch when training stops
	// (batch-norm running statistics keep their latest values).
	RestoreBest bool
}

// Config sets how Fit trains.
type Config struct {
	Epochs    int
	BatchSize int // 0: full batch
	// Sequential visits the training rows in order every epoch instead of reshuffling.
	Sequential bool
	Seed       uint64
	// Loss is losses.Multiclass (K logits per example, the default) or losses.Binary (one
	// logit per example, labels 0/1).
	Loss  losses.Kind
	Decay *Decay
	Early *EarlyStopping
	// OnEpoch, if set, sees every epoch's metrics as soon as they are known; an error stops
	// training and is returned.
	OnEpoch func(EpochMetrics) error
	// BeforeStep, if set, is called before optimizer step t (t counts the steps taken so far,
	// across epochs: 0 before the first) for every t divisible by StepEvery (0 or 1: every
	// step), with every deferred update applied, so that the weights it reads are θ_t exactly.
	// It must not change the weights; an error stops training and is returned. Settling the
	// deferred updates costs a pass over the weights, hence StepEvery.
	BeforeStep func(ctx context.Context, t int) error
	StepEvery  int
}

// EpochMetrics are one epoch's results. Validation fields are NaN without validation data.
type EpochMetrics struct {
	Epoch                int
	Loss, Accuracy       float64 // training loss (the mean over the epoch's batches) and accuracy after the epoch
	ValLoss, ValAccuracy float64
}

// History is what Fit did.
type History struct {
	Epochs    []EpochMetrics
	BestEpoch int    // index into Epochs of the best monitored loss (the last epoch without early stopping)
	Stopped   string // why training ended early, or ""
}

// Trainer holds the compiled programs of one model.
type Trainer struct {
	model  layers.Model
	kind   losses.Kind
	decay  *Decay
	train  map[int]*program
	eval   map[int]*program
	params []*layers.Param
	data   *DataCache
}

type program struct {
	prog   *graph.Program
	x, y   *G.Node
	xv, yv *tensor.Dense
	logits *G.Node
	loss   *G.Node
	grads  []*G.Node
	pass   *layers.Pass
	// the gradients' values and the parameters' tensors handed to the optimizer, kept
	// across steps so that a step allocates nothing for them
	gradVals  []G.Value
	paramVals []*tensor.Dense
	gradRows  [][]int32 // what the Program knows of the gradients' nonzero rows (step)
	finite    []bool    // which gradients the Program vouches are finite (step)
	// rowRead[i]: the Program reads parameter i only as the product of the batch's inputs
	// with it, so only in the rows the batch's nonzero inputs select (deferral)
	rowRead []bool
	// readOnly: the gradients are promised read-only to the Program (the optimizer of the
	// last step was a samplers.RowStepper)
	readOnly bool
	// products: the Program may leave weight gradients uncomputed for the optimizer (that of
	// the last step was a samplers.ProductTeller); prods are the last step's
	products bool
	prods    []samplers.Product
	// set lists the entries of xv that the last sparse fill made nonzero, so that the next
	// one clears only those (all of xv when stale: after a dense fill)
	set      []int
	setStale bool
}

// run runs the program on the batch the last fill loaded: after a sparse fill, it tells the
// Program where the batch's nonzeros are (set), which spares the scan of every zero of a
// one-hot batch for them in the first layer's products.
func (p *program) run(ctx context.Context) error {
	if !p.setStale {
		if err := p.prog.NonzerosAt(p.x, p.set); err != nil {
			return err
		}
	}
	return p.prog.Run(ctx)
}

// errNilModel is the error of a constructor given no model (or one without a net).
var errNilModel = errors.New("train: a nil model, or one without a layers.Net")

// errNilTrainer is what a Trainer's methods return when it was not made by NewTrainer.
var errNilTrainer = errors.New("train: a nil Trainer, or one not made by NewTrainer")

// NewTrainer prepares training of m with the given risk (losses.Multiclass when empty) and
// optional weight decay.
func NewTrainer(m layers.Model, kind losses.Kind, decay *Decay) (*Trainer, error) {
	if kind == "" {
		kind = losses.Multiclass
	}
	if kind != losses.Multiclass && kind != losses.Binary {
		return nil, fmt.Errorf("train: risk %q; want %q or %q", kind, losses.Multiclass, losses.Binary)
	}
	if decay != nil && decay.WD == nil {
		return nil, fmt.Errorf("train: decay without a WeightDecay")
	}
	if m == nil || m.Net() == nil {
		return nil, errNilModel
	}
	ps := m.Net().Params()
	if len(ps) == 0 {
		return nil, fmt.Errorf("train: the model has no parameters")
	}
	return &Trainer{model: m, kind: kind, decay: decay, train: map[int]*program{}, eval: map[int]*program{}, params: ps, data: &DataCache{}}, nil
}

func (tr *Trainer) outputs(ds *datasets.Dataset) int {
	if tr.kind == losses.Binary {
		return 1
	}
	return max(len(ds.Classes), maxLabel(ds.Y)+1)
}

func maxLabel(y []int) int {
	m := -1
	for _, v := range y {
		m = max(m, v)
	}
	return m
}

// build compiles the program for batches of b examples.
func (tr *Trainer) build(b int, shape []int, k int, training bool) (*program, error) {
	net := tr.model.Net()
	p := &program{}
	xs := append([]int{b}, shape...)
	p.x = net.Input("batch.x", xs...)
	p.y = net.Input("batch.y", b, k)
	p.xv = zeros(net.Dtype(), xs)
	p.yv = zeros(net.Dtype(), []int{b, k})
	if err := G.Let(p.x, p.xv); err != nil {
		return nil, err
	}
	if err := G.Let(p.y, p.yv); err != nil {
		return nil, err
	}
	mode := layers.Eval
	if training {
		mode = layers.Train
	}
	p.pass = layers.NewPass(mode)
	var err error
	if p.logits, err = tr.model.Logits(p.x, p.pass); err != nil {
		return nil, err
	}
	if s := p.logits.Shape(); len(s) != 2 || s[0] != b || s[1] != k {
		return nil, fmt.Errorf("train: the model gives logits of shape %v; want (%d, %d)", s, b, k)
	}
	if p.loss, err = losses.Risk(tr.kind, p.logits, p.y); err != nil {
		return nil, err
	}
	outs := []*G.Node{p.logits, p.loss}
	if training {
		obj := p.loss
		if tr.decay != nil && tr.decay.Mode == Coupled {
			pen, err := tr.decay.WD.Penalty()
			if err != nil {
				return nil, err
			}
			if obj, err = graph.Add(obj, pen); err != nil {
				return nil, err
			}
		}
		if p.grads, err = graph.Grad(obj, net.ParamNodes()...); err != nil {
			return nil, err
		}
		outs = append(outs, p.grads...)
		outs = append(outs, p.pass.StatNodes()...)
	}
	if p.prog, err = graph.Compile(outs...); err != nil {
		return nil, err
	}
	if training {
		p.rowRead = make([]bool, len(tr.params))
		for i, q := range tr.params {
			p.rowRead[i] = p.prog.ReadOnlyThroughProduct(p.x, q.Node)
		}
	}
	return p, nil
}

func zeros(dt tensor.Dtype, shape []int) *tensor.Dense {
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
}

func (tr *Trainer) programFor(b int, ds *datasets.Dataset, training bool) (*program, error) {
	cache := tr.eval
	if training {
		cache = tr.train
	}
	if p, ok := cache[b]; ok {
		return p, nil
	}
	p, err := tr.build(b, ds.Shape, tr.outputs(ds), training)
	if err != nil {
		return nil, err
	}
	cache[b] = p
	return p, nil
}

// load copies rows idx of ds into the program's input tensors.
func (tr *Trainer) load(p *program, ds *datasets.Dataset, idx []int) error {
	k := p.yv.Shape()[1]
	sp := tr.data.sparseRows(ds)
	switch x := p.xv.Data().(type) {
	case []float64:
		y := p.yv.Data().([]float64)
		fillBatch(p, x, y, ds, sp, idx, k)
	case []float32:
		y := p.yv.Data().([]float32)
		fillBatch(p, x, y, ds, sp, idx, k)
	default:
		return fmt.Errorf("train: input of type %T", x)
	}
	return nil
}

// fillBatch copies rows idx of ds into p's batch x, y: from sp, ds's rows compressed, when
// ds is mostly zeros (touching only the entries that change), else row by row.
func fillBatch[T graph.Float](p *program, x, y []T, ds *datasets.Dataset, sp *sparseRows, idx []int, k int) {
	if sp != nil {
		if p.setStale {
			clear(x)
		} else {
			for _, j := range p.set {
				x[j] = 0
			}
		}
		p.set, p.setStale = p.set[:0], false
		for r, i := range idx {
			for t := sp.ptr[i]; t < sp.ptr[i+1]; t++ {
				j := r*ds.D + int(sp.col[t])
				x[j] = T(sp.val[t])
				p.set = append(p.set, j)
			}
		}
	} else {
		p.setStale = true
	}
	for r, i := range idx {
		if sp == nil {
			dst := x[r*ds.D : (r+1)*ds.D]
			for j, v := range ds.Row(i) {
				dst[j] = T(v)
			}
		}
		out := y[r*k : (r+1)*k]
		for j := range out {
			out[j] = 0
		}
		if k == 1 {
			out[0] = T(ds.Y[i])
		} else {
			out[ds.Y[i]] = 1
		}
	}
}

// checkData refuses data the Trainer cannot use. A NaN or infinite feature is nonzero, so
// a dataset the Trainer keeps compressed (DataCache) holds every one among its nonzeros:
// reading those spares a pass over every zero at every Fit and Evaluate (as much time as a
// one-epoch fit of a one-hot table).
func (tr *Trainer) checkData(ds *datasets.Dataset, shape []int, what string) error {
	if ds == nil || ds.N == 0 {
		return fmt.Errorf("train: no %s data", what)
	}
	if ds.Y == nil {
		return fmt.Errorf("train: %s data %q has no class labels", what, ds.Name)
	}
	if shape != nil && fmt.Sprint(ds.Shape) != fmt.Sprint(shape) {
		return fmt.Errorf("train: %s data has examples of shape %v, training data %v", what, ds.Shape, shape)
	}
	at := -1
	if sp := tr.data.sparseRows(ds); sp != nil {
		if t := graph.FirstNonFinite(sp.val); t >= 0 {
			i, _ := slices.BinarySearch(sp.ptr, t+1) // the row whose nonzeros hold t
			at = (i-1)*ds.D + int(sp.col[t])
		}
	} else {
		at = graph.FirstNonFinite(ds.X)
	}
	if at >= 0 {
		return fmt.Errorf("train: %s data %q has a non-finite value at row %d, column %d", what, ds.Name, at/ds.D, at%ds.D)
	}
	return nil
}

// StepResult is what one optimizer step saw: the batch loss before the step and how many of
// the batch's examples the model (in training mode) classified correctly.
type StepResult struct {
	Loss    float64
	Correct int
}

// Step takes one optimizer step on rows idx of ds, drawing dropout masks from dropout.
func (tr *Trainer) Step(ctx context.Context, opt samplers.Optimizer, ds *datasets.Dataset, idx []int, dropout *rand.Rand) (StepResult, error) {
	if tr == nil || tr.model == nil {
		return StepResult{}, errNilTrainer
	}
	if opt == nil {
		return StepResult{}, errors.New("train: Step without an optimizer (got nil)")
	}
	if ds == nil || ds.N == 0 {
		return StepResult{}, errors.New("train: Step on no data")
	}
	return tr.step(ctx, opt, ds, idx, dropout, nil)
}

// step is Step, with the updates of rows no batch reads deferred when d is not nil.
func (tr *Trainer) step(ctx context.Context, opt samplers.Optimizer, ds *datasets.Dataset, idx []int, dropout *rand.Rand, d *deferral) (StepResult, error) {
	var res StepResult
	p, err := tr.programFor(len(idx), ds, true)
	if err != nil {
		return res, err
	}
	if err := tr.load(p, ds, idx); err != nil {
		return res, err
	}
	if err := d.settleBatch(p, tr.data.sparseRows(ds), idx); err != nil {
		return res, err
	}
	if err := p.pass.Draw(dropout); err != nil {
		return res, err
	}
	p.deferProducts(opt)
	if err := p.run(ctx); err != nil {
		return res, err
	}
	loss, err := p.prog.Scalar(p.loss)
	if err != nil {
		return res, err
	}
	res.Loss = loss
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return res, fmt.Errorf("%w: the training loss is %v", ErrDiverged, loss)
	}
	lv, err := p.prog.Value(p.logits)
	if err != nil {
		return res, err
	}
	k := p.yv.Shape()[1]
	switch d := lv.Data().(type) {
	case []float32:
		res.Correct = countCorrect(d, k, ds.Y, idx)
	case []float64:
		res.Correct = countCorrect(d, k, ds.Y, idx)
	default:
		return res, fmt.Errorf("train: logits of type %T", d)
	}
	if p.gradVals == nil {
		p.gradVals = make([]G.Value, len(p.grads))
		p.paramVals = make([]*tensor.Dense, len(tr.params))
		for i, q := range tr.params {
			p.paramVals[i] = q.Value
		}
	}
	grads, values := p.gradVals, p.paramVals
	if err := p.gradients(grads); err != nil {
		return res, err
	}
	// Every Optimizer refuses a non-finite gradient before it changes anything; the ones of
	// package samplers that also check what they write (Checked) are trusted with the scan,
	// which is then repeated only to name the entry when Step fails. Other optimizers' inputs
	// are scanned here first.
	_, checked := opt.(samplers.Checked)
	nonFiniteGrad := func() error {
		for i, g := range grads {
			if j, v := firstNonFinite(g); j >= 0 {
				return fmt.Errorf("%w: the gradient of %s is %v (flat index %d)", ErrDiverged, tr.params[i].Name, v, j)
			}
		}
		return nil
	}
	if !checked {
		if err := nonFiniteGrad(); err != nil {
			return res, err
		}
	}
	if err := p.step(opt, values, grads, d); err != nil {
		if checked {
			if p.products { // the scan reads every gradient: compute those left to the optimizer
				for i, g := range p.grads {
					if grads[i], err = p.prog.Value(g); err != nil {
						return res, err
					}
				}
			}
			if gerr := nonFiniteGrad(); gerr != nil {
				return res, gerr
			}
		}
		return res, fmt.Errorf("train: optimizer step: %w", err)
	}
	// An optimizer that checked the values it wrote says which parameter to look at; the
	// others' parameters are all scanned.
	check := tr.params
	if c, ok := opt.(samplers.Checked); ok {
		check = nil
		if i := c.NonFiniteAfterStep(); i >= 0 && i < len(tr.params) {
			check = tr.params[i : i+1]
		}
	}
	for _, q := range check {
		if j, v := firstNonFinite(q.Value); j >= 0 {
			return res, fmt.Errorf("%w: parameter %s is %v (flat index %d) after the optimizer step", ErrDiverged, q.Name, v, j)
		}
	}
	if err := p.pass.Update(p.prog); err != nil {
		return res, err
	}
	if tr.decay != nil && tr.decay.Mode == Decoupled {
		if err := tr.decay.WD.ApplyDecoupled(tr.decay.LR); err != nil {
			return res, err
		}
	}
	return res, nil
}

// countCorrect is how many rows of logits (one per idx, k columns) predict y[idx[r]], with
// losses.Scores.Predict's rule (argmax, the first of equal maxima; logit > 0 for one column)
// read in place rather than through a float64 copy of the logits every step.
func countCorrect[T graph.Float](logits []T, k int, y, idx []int) int {
	n := 0
	for r, i := range idx {
		row := logits[r*k : (r+1)*k]
		pred := 0
		if k == 1 {
			if row[0] > 0 {
				pred = 1
			}
		} else {
			for j, v := range row {
				if v > row[pred] {
					pred = j
				}
			}
		}
		if pred == y[i] {
			n++
		}
	}
	return n
}

// TrainProgram is the compiled training program for batches of b examples, or nil before the
// first Step at that size; its Profile and OpTimes time a step op by op.
func (tr *Trainer) TrainProgram(b int) *graph.Program {
	if tr == nil {
		return nil
	}
	if p, ok := tr.train[b]; ok {
		return p.prog
	}
	return nil
}

// firstNonFinite returns the flat index and value of v's first NaN or infinite entry, or −1.
// Values that are neither float32 nor float64 tensors or scalars are not inspected. Tensors
// go through graph's vector scan (this runs over every gradient of every step).
func firstNonFinite(v G.Value) (int, float64) {
	var data any
	switch t := v.(type) {
	case *tensor.Dense:
		data = t.Data()
	default:
		data = v.Data()
	}
	switch d := data.(type) {
	case []float64:
		if j := graph.FirstNonFinite(d); j >= 0 {
			return j, d[j]
		}
	case []float32:
		if j := graph.FirstNonFinite(d); j >= 0 {
			return j, float64(d[j])
		}
	case float64:
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return 0, d
		}
	case float32:
		if f := float64(d); math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, f
		}
	}
	return -1, 0
}

// ShareData makes the Trainer prepare the datasets it is given in c, shared with other
// Trainers (see DataCache), instead of in a cache of its own.
func (tr *Trainer) ShareData(c *DataCache) {
	if tr != nil && c != nil {
		tr.data = c
	}
}

// Result is a model's evaluation on a dataset.
type Result struct {
	Loss     float64
	Accuracy float64
	Scores   losses.Scores // logits, one row per example
}

// AUC is the ROC-AUC of the result's scores (one-vs-rest macro for several classes).
func (r Result) AUC(labels []int) (float64, error) { return losses.ROCAUCOvR(r.Scores, labels) }

// Evaluate scores ds in inference mode in batches of batch rows (all at once when 0).
func (tr *Trainer) Evaluate(ctx context.Context, ds *datasets.Dataset, batch int) (Result, error) {
	if tr == nil || tr.model == nil {
		return Result{}, errNilTrainer
	}
	if err := tr.checkData(ds, nil, "evaluation"); err != nil {
		return Result{}, err
	}
	if batch <= 0 || batch > ds.N {
		batch = ds.N
	}
	k := tr.outputs(ds)
	res := Result{Scores: losses.Scores{Values: make([]float64, 0, ds.N*k), N: ds.N, K: k}}
	total := 0.0
	for start := 0; start < ds.N; start += batch {
		end := min(start+batch, ds.N)
		idx := make([]int, end-start)
		for i := range idx {
			idx[i] = start + i
		}
		p, err := tr.programFor(len(idx), ds, false)
		if err != nil {
			return Result{}, err
		}
		if err := tr.load(p, ds, idx); err != nil {
			return Result{}, err
		}
		if err := p.run(ctx); err != nil {
			return Result{}, err
		}
		l, err := p.prog.Scalar(p.loss)
		if err != nil {
			return Result{}, err
		}
		total += l * float64(len(idx))
		logits, err := p.prog.Float64s(p.logits)
		if err != nil {
			return Result{}, err
		}
		res.Scores.Values = append(res.Scores.Values, logits...)
	}
	res.Loss = total / float64(ds.N)
	var err error
	if res.Accuracy, err = losses.Accuracy(res.Scores, ds.Y, 0); err != nil {
		return Result{}, err
	}
	return res, nil
}

// Fit trains m on trainData with opt; valData may be nil.
func Fit(ctx context.Context, m layers.Model, opt samplers.Optimizer, trainData, valData *datasets.Dataset, cfg Config) (*History, error) {
	tr, err := NewTrainer(m, cfg.Loss, cfg.Decay)
	if err != nil {
		return nil, err
	}
	return tr.Fit(ctx, opt, trainData, valData, cfg)
}

// Fit trains with opt; see the package function Fit.
func (tr *Trainer) Fit(ctx context.Context, opt samplers.Optimizer, trainData, valData *datasets.Dataset, cfg Config) (*History, error) {
	if tr == nil || tr.model == nil {
		return nil, errNilTrainer
	}
	if opt == nil {
		return nil, errors.New("train: Fit without an optimizer (got nil)")
	}
	d := tr.newDeferral(opt)
	h, err := tr.fit(ctx, opt, trainData, valData, cfg, d)
	// a Fit that stopped within an epoch leaves no update owed either
	if serr := d.settleAll(); serr != nil && err == nil {
		err = serr
	}
	return h, err
}

func (tr *Trainer) fit(ctx context.Context, opt samplers.Optimizer, trainData, valData *datasets.Dataset, cfg Config, d *deferral) (*History, error) {
	if cfg.Epochs <= 0 {
		return nil, fmt.Errorf("train: %d epochs", cfg.Epochs)
	}
	if err := tr.checkData(trainData, nil, "training"); err != nil {
		return nil, err
	}
	if valData != nil {
		if err := tr.checkData(valData, trainData.Shape, "validation"); err != nil {
			return nil, err
		}
	}
	bs := cfg.BatchSize
	if bs <= 0 || bs > trainData.N {
		bs = trainData.N
	}
	monitor := ""
	if cfg.Early != nil {
		monitor = cfg.Early.Monitor
		if monitor == "" {
			monitor = "val_loss"
			if valData == nil {
				monitor = "loss"
			}
		}
		if monitor != "loss" && monitor != "val_loss" {
			return nil, fmt.Errorf("train: early stopping monitors %q; want loss or val_loss", monitor)
		}
		if monitor == "val_loss" && valData == nil {
			return nil, fmt.Errorf("train: early stopping on val_loss without validation data")
		}
	}
	shuffle := rand.New(rand.NewPCG(cfg.Seed, 1))
	dropout := rand.New(rand.NewPCG(cfg.Seed, 2))
	order := make([]int, trainData.N)
	for i := range order {
		order[i] = i
	}
	h := &History{}
	every := max(cfg.StepEvery, 1)
	steps := 0
	best, wait := math.Inf(1), 0
	var bestWeights [][]float64
	for epoch := 0; epoch < cfg.Epochs; epoch++ {
		if !cfg.Sequential {
			shuffle.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		sum, batches, correct := 0.0, 0, 0
		for start := 0; start < trainData.N; start += bs {
			if err := ctx.Err(); err != nil {
				return h, err
			}
			idx := order[start:min(start+bs, trainData.N)]
			if cfg.BeforeStep != nil && steps%every == 0 {
				if err := d.settleAll(); err != nil {
					return h, fmt.Errorf("train: epoch %d, batch %d: %w", epoch+1, batches+1, err)
				}
				if err := cfg.BeforeStep(ctx, steps); err != nil {
					return h, err
				}
			}
			steps++
			r, err := tr.step(ctx, opt, trainData, idx, dropout, d)
			if err != nil {
				return h, fmt.Errorf("train: epoch %d, batch %d: %w", epoch+1, batches+1, err)
			}
			sum += r.Loss * float64(len(idx))
			correct += r.Correct
			batches++
		}
		if err := d.settleAll(); err != nil {
			return h, fmt.Errorf("train: epoch %d: %w", epoch+1, err)
		}
		em := EpochMetrics{Epoch: epoch + 1, Loss: sum / float64(trainData.N), Accuracy: float64(correct) / float64(trainData.N),
			ValLoss: math.NaN(), ValAccuracy: math.NaN()}
		if valData != nil {
			vr, err := tr.Evaluate(ctx, valData, bs)
			if err != nil {
				return h, err
			}
			em.ValLoss, em.ValAccuracy = vr.Loss, vr.Accuracy
		}
		h.Epochs = append(h.Epochs, em)
		h.BestEpoch = len(h.Epochs) - 1
		if cfg.OnEpoch != nil {
			if err := cfg.OnEpoch(em); err != nil {
				return h, err
			}
		}
		if cfg.Early == nil {
			continue
		}
		cur := em.Loss
		if monitor == "val_loss" {
			cur = em.ValLoss
		}
		if math.IsNaN(cur) || math.IsInf(cur, 0) {
			return h, fmt.Errorf("train: epoch %d: %w: the monitored loss is %v", epoch+1, ErrDiverged, cur)
		}
		if cur < best-cfg.Early.MinDelta {
			best, wait = cur, 0
			if cfg.Early.RestoreBest {
				bestWeights = snapshot(tr.params)
			}
		} else {
			wait++
		}
		h.BestEpoch = bestIndex(h, monitor, cfg.Early.MinDelta)
		if wait >= cfg.Early.Patience && cfg.Early.Patience > 0 {
			h.Stopped = fmt.Sprintf("%s did not improve by more than %g for %d epochs", monitor, cfg.Early.MinDelta, cfg.Early.Patience)
			if bestWeights != nil {
				restore(tr.params, bestWeights)
			}
			break
		}
	}
	return h, nil
}
