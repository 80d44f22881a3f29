package convexity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// WhiteboxOptions turn on, and size, the white-box record of every full training of a Task
// (Task.Whitebox). Zero fields take the defaults below.
//
// The record's cost is about fixed per trial — some 17 gradients' worth of Hessian-vector
// products on Rows rows (a partial product costs two gradients: differentiating the gradient
// again takes 8 direction-dependent matrix products for an MLP of one hidden layer against
// the gradient's 5), the Eq. 7 gradients and one forward pass over the training rows — so its
// share of a trial depends on how much the trial itself computes: a few percent of a
// Bayesmark MLP's trial, a third or more of an early-stopped trial on a small OpenML set.
// BenchmarkWhitebox (experiments/ahsc) measures it; docs/performance.md has the figures and
// what Rows does to the estimates (BenchmarkWhiteboxRows).
type WhiteboxOptions struct {
	// Probes is the number of Rademacher probes of the Hutchinson estimate of tr H (at least
	// 2, for its standard error); default DefaultProbes.
	Probes int
	// PowerIters bounds the Hessian-vector products of the Lanczos iteration for the
	// eigenvalue of H of largest magnitude (EigenLanczos), the first of which is the first
	// Hutchinson probe's; it stops earlier when the Ritz value's residual is at most PowerTol
	// times its magnitude. Defaults DefaultPowerIters and DefaultPowerTol. (The names are
	// those of the power iteration the record used before, EigenPower.)
	PowerIters int
	PowerTol   float64
	// Stride k samples the iterates of the Eq. 7 regularizer: θ_t for t = 0, k, 2k, … below
	// the number of optimizer steps T (t counts steps across epochs). k = 1 is the paper's
	// sum over every iterate. 0 (the default) is DefaultStrideEpochs epochs' steps,
	// DefaultStrideEpochs·⌈rows/batch⌉ for the candidate's batch size: each sample costs
	// about an epoch of computation (the gradients on every training and validation row).
	Stride int
	// Rows is how many rows the curvature and the gradients of a_t are computed on: the
	// first Rows of Task.Train and of Task.Val, in the splits' order; 0 is DefaultRows, and a
	// number at least a split's size all of it.
	Rows int
}

// The estimators of Whitebox.TopEigenvalue (Whitebox.EigenMethod).
const (
	// EigenLanczos is Lanczos started from the first Hutchinson probe, without
	// reorthogonalization, stopped at a residual of PowerTol·|θ| or after PowerIters
	// products: the record's method.
	EigenLanczos = "lanczos"
	// EigenPower is power iteration from a Gaussian start, stopped when the Rayleigh quotient
	// changed by less than PowerTol (relative) or after PowerIters iterations, plus one
	// product for the final quotient: the method of the records made before Lanczos.
	EigenPower = "power"
)

// The defaults of WhiteboxOptions.
const (
	DefaultProbes       = 4
	DefaultPowerIters   = 10
	DefaultPowerTol     = 1e-3
	DefaultStrideEpochs = 8
	DefaultRows         = 256
)

// maxWhiteboxWork bounds the options, so that a typo cannot make a record cost days.
const maxWhiteboxWork = 100000

// Resolved returns o with its defaults filled in, or an error naming a field out of range.
func (o WhiteboxOptions) Resolved() (WhiteboxOptions, error) {
	if o.Probes == 0 {
		o.Probes = DefaultProbes
	}
	if o.PowerIters == 0 {
		o.PowerIters = DefaultPowerIters
	}
	if o.PowerTol == 0 {
		o.PowerTol = DefaultPowerTol
	}
	if o.Rows == 0 {
		o.Rows = DefaultRows
	}
	switch {
	case o.Probes < 2 || o.Probes > maxWhiteboxWork:
		return o, fmt.Errorf("convexity: white-box record with %d Hutchinson probes; want 2 to %d", o.Probes, maxWhiteboxWork)
	case o.PowerIters < 1 || o.PowerIters > maxWhiteboxWork:
		return o, fmt.Errorf("convexity: white-box record with %d Lanczos steps; want 1 to %d", o.PowerIters, maxWhiteboxWork)
	case !(o.PowerTol > 0) || o.PowerTol >= 1:
		return o, fmt.Errorf("convexity: white-box eigenvalue tolerance %v; want one in (0, 1)", o.PowerTol)
	case o.Stride < 0 || o.Stride > maxWhiteboxWork:
		return o, fmt.Errorf("convexity: white-box regularizer stride %d; want 1 to %d (0: %d epochs' steps)", o.Stride, maxWhiteboxWork, DefaultStrideEpochs)
	case o.Rows < 1:
		return o, fmt.Errorf("convexity: white-box record on %d rows; want ≥ 1 (0: %d)", o.Rows, DefaultRows)
	}
	return o, nil
}

// Whitebox is the white-box record of one full training: what the trained model looks like
// from inside, beside the scores a black-box search sees. Fields that could not be computed
// are NaN (see Eq7).
type Whitebox struct {
	// Mu is the closed-form strong convexity of the trained model on the training data
	// (StrongConvexity, the maximum over its unshuffled batches of the configuration's batch
	// size, as AHSC screens).
	Mu float64
	// Trace is the Hutchinson estimate of tr H, H the Hessian of the training risk (inference
	// mode, on the first Rows training rows) at the trained weights, from Probes Rademacher probes,
	// with its standard error.
	Trace, TraceStdErr float64
	Probes             int
	// TopEigenvalue is H's eigenvalue of largest magnitude, estimated by EigenMethod with at
	// most PowerIters Hessian-vector products and tolerance PowerTol: EigenLanczos, or
	// EigenPower in records made before Lanczos.
	TopEigenvalue float64
	EigenMethod   string
	PowerIters    int
	PowerTol      float64
	// Eq7 is the PAC-Bayes paper's regularizer √Σ_t‖a_t‖², a_t = ∇R̂_T(θ_t) − ∇R̂_V(θ_t) the
	// difference of the mean training risk's gradient and the mean validation risk's (each
	// on its first Rows rows), in inference mode, over the iterates θ_t of training
	// sampled every Stride steps (Iterates of them; Stride as resolved for the candidate): √(Stride·Σ_sampled‖a_t‖²), an estimate
	// of the sum over every iterate, exact for Stride 1. NaN, with Iterates 0, for a
	// Candidate whose own Fit does not report its iterates (Candidate.Trajectory), and for a
	// task whose validation data is its training data (a_t would be 0 by construction).
	Eq7      float64
	Stride   int
	Iterates int
	// TrainLoss is the trained model's mean training loss on Task.Train, in inference mode
	// (what train.Trainer.Evaluate reports, up to rounding: it is computed in μ's batches);
	// LossGap is the evaluation's validation loss minus it, MetricGap its validation metric
	// minus its test metric (NaN without test data): both positive when validation flatters
	// the model.
	TrainLoss, LossGap, MetricGap float64
	// Rows is the rows of each split the curvature and the gradients were computed on.
	Rows int
	// Seconds is what the record cost, training time excluded.
	Seconds float64
}

// riskNode is the mean risk of m on the first rows rows of ds (all of them when rows ≤ 0 or
// more than ds has), in inference mode, as a node of m's graph; name keeps its inputs apart.
func riskNode(m layers.FeatureModel, ds *datasets.Dataset, kind losses.Kind, rows int, name string) (*G.Node, error) {
	if m == nil || ds == nil || ds.N == 0 {
		return nil, errors.New("convexity: the risk of a nil model or on no data")
	}
	if rows <= 0 || rows > ds.N {
		rows = ds.N
	}
	net := m.Net()
	k := m.Head().Out
	x := net.Input(name+".x", append([]int{rows}, ds.Shape...)...)
	y := net.Input(name+".y", rows, k)
	if err := G.Let(x, layers.NewTensor(net.Dtype(), ds.X[:rows*ds.D], append([]int{rows}, ds.Shape...)...)); err != nil {
		return nil, err
	}
	labels := make([]float64, rows*k)
	for i := 0; i < rows; i++ {
		if k == 1 {
			labels[i] = float64(ds.Y[i])
		} else if ds.Y[i] >= 0 && ds.Y[i] < k {
			labels[i*k+ds.Y[i]] = 1
		} else {
			return nil, fmt.Errorf("convexity: %s row %d has class %d of a model with %d outputs", name, i, ds.Y[i], k)
		}
	}
	if err := G.Let(y, layers.NewTensor(net.Dtype(), labels, rows, k)); err != nil {
		return nil, err
	}
	logits, err := m.Logits(x, layers.NewPass(layers.Eval))
	if err != nil {
		return nil, err
	}
	if kind == "" {
		kind = losses.Multiclass
	}
	return losses.Risk(kind, logits, y)
}

// gradProgram evaluates a risk's flat gradient in the model's parameters at their current
// values.
type gradProgram struct {
	prog  *graph.Program
	grads []*G.Node
}

func newGradProgram(loss *G.Node, params []*G.Node) (*gradProgram, error) {
	grads, err := graph.Grad(loss, params...)
	if err != nil {
		return nil, err
	}
	prog, err := graph.Compile(grads...)
	if err != nil {
		return nil, err
	}
	return &gradProgram{prog: prog, grads: grads}, nil
}

// addSqDistance returns sum + ‖a − b‖², a the values of the nodes na in program pa and b
// those of nb in pb, in order, each difference and square in float64: the sum of the
// flattened vectors' squared differences, without the two copies (tens of megabytes of
// fresh memory at every record of a model of millions of parameters).
func addSqDistance(sum float64, pa *graph.Program, na []*G.Node, pb *graph.Program, nb []*G.Node) (float64, error) {
	if len(na) != len(nb) {
		return 0, fmt.Errorf("convexity: a distance between %d and %d nodes", len(na), len(nb))
	}
	for i := range na {
		a, err := pa.Value(na[i])
		if err != nil {
			return 0, err
		}
		b, err := pb.Value(nb[i])
		if err != nil {
			return 0, err
		}
		if !a.Shape().Eq(b.Shape()) || a.Dtype() != b.Dtype() {
			return 0, fmt.Errorf("convexity: a distance between a %v %v and a %v %v", a.Dtype(), a.Shape(), b.Dtype(), b.Shape())
		}
		switch a.Dtype() {
		case tensor.Float64:
			if sum, err = addSqDiff[float64](sum, a, b); err != nil {
				return 0, err
			}
		case tensor.Float32:
			if sum, err = addSqDiff[float32](sum, a, b); err != nil {
				return 0, err
			}
		default:
			return 0, fmt.Errorf("convexity: node %s of dtype %v", na[i].Name(), a.Dtype())
		}
	}
	return sum, nil
}

func addSqDiff[T float32 | float64](sum float64, a, b G.Value) (float64, error) {
	ea, err := graph.Elements[T](a)
	if err != nil {
		return 0, err
	}
	eb, err := graph.Elements[T](b)
	if err != nil {
		return 0, err
	}
	for i := range ea {
		d := float64(ea[i]) - float64(eb[i])
		sum += d * d
	}
	return sum, nil
}

// recorder follows one full training for its white-box record: it accumulates ‖a_t‖² at the
// sampled iterates (train.Config.BeforeStep) and measures the trained model.
type recorder struct {
	opt      WhiteboxOptions
	task     *Task
	seed     uint64
	model    layers.FeatureModel
	curv     *Curvature // the training risk's, on opt.Rows rows
	val      *gradProgram
	sumSq    float64
	iterates int
	spent    time.Duration
}

// newRecorder compiles the programs of m's white-box record under task t.
func newRecorder(t *Task, m layers.FeatureModel, opt WhiteboxOptions, seed uint64) (*recorder, error) {
	began := time.Now()
	trainRisk, err := riskNode(m, t.Train, t.Loss, opt.Rows, "whitebox.train")
	if err != nil {
		return nil, err
	}
	params := m.Net().ParamNodes()
	curv, err := newCurvature(trainRisk, params, true, recordPool)
	if err != nil {
		return nil, err
	}
	r := &recorder{opt: opt, task: t, seed: seed, model: m, curv: curv}
	if t.recordsValidation() {
		valRisk, err := riskNode(m, t.Val, t.Loss, opt.Rows, "whitebox.val")
		if err != nil {
			return nil, err
		}
		if r.val, err = newGradProgram(valRisk, params); err != nil {
			return nil, err
		}
		r.val.prog.UsePool(recordPool)
	}
	r.spent = time.Since(began)
	return r, nil
}

// RecordRows are the rows the white-box record of a training of the task in batches of
// batch rows computes on (see layers.RecordRows), for an Estimate that counts the record
// (layers.EstimateMLPRecordBytes, layers.EstimateConvNetRecordBytes); zero without
// Whitebox.
func (t *Task) RecordRows(batch int) (layers.RecordRows, error) {
	if t == nil {
		return layers.RecordRows{}, errors.New("convexity: RecordRows of a nil Task")
	}
	if t.Whitebox == nil {
		return layers.RecordRows{}, nil
	}
	o, err := t.Whitebox.Resolved()
	if err != nil {
		return layers.RecordRows{}, err
	}
	if t.Train == nil || t.Train.N == 0 {
		return layers.RecordRows{}, errors.New("convexity: a white-box record of a task without training data")
	}
	r := layers.RecordRows{Train: min(o.Rows, t.Train.N), N: t.Train.N, Batch: batch}
	if t.recordsValidation() {
		r.Val = min(o.Rows, t.Val.N)
	}
	return r, nil
}

// recordsValidation reports whether the record computes the validation risk's gradient: a
// task validating on its training data (the refit of the authors' Bayesmark protocol) has
// a_t = 0 at every iterate, so its record leaves Eq. 7 NaN.
func (t *Task) recordsValidation() bool { return t.Val != nil && t.Val != t.Train }

// strideFor resolves the regularizer's stride for a candidate training in batches of batch
// rows (0: full batch).
func (r *recorder) strideFor(batch int) int {
	if r.opt.Stride > 0 {
		return r.opt.Stride
	}
	n := r.task.Train.N
	if batch <= 0 || batch > n {
		batch = n
	}
	r.opt.Stride = DefaultStrideEpochs * ((n + batch - 1) / batch)
	return r.opt.Stride
}

// follows reports whether the recorder has a regularizer to accumulate: a task whose
// validation data is its training data (the refit of the authors' Bayesmark protocol) has
// a_t = 0 at every iterate, which is no measurement, so its record leaves Eq7 NaN.
func (r *recorder) follows() bool { return r != nil && r.val != nil }

// beforeStep adds ‖a_t‖² at iterate θ_t (train.Config.BeforeStep; Fit calls it every Stride
// steps).
func (r *recorder) beforeStep(ctx context.Context, _ int) error {
	began := time.Now()
	defer func() { r.spent += time.Since(began) }()
	if err := r.curv.runLossGrad(ctx); err != nil {
		return err
	}
	if err := r.val.prog.Run(ctx); err != nil {
		return err
	}
	sum, err := addSqDistance(r.sumSq, r.curv.lgProg, r.curv.grads, r.val.prog, r.val.grads)
	if err != nil {
		return err
	}
	r.sumSq = sum
	r.iterates++
	return nil
}

// recordPool lends the programs of each record the buffers of the records before it
// (graph.Pool): a record's programs live for one trial, and the first run of a program in
// fresh memory cost 3 to 7 times a later one, most of it page faults. It keeps at most
// recordPoolBytes, the buffers of about one record of a 4×1024 MLP on 256 rows.
var recordPool = graph.NewPool(recordPoolBytes)

const recordPoolBytes = 256 << 20

// release gives the record's buffers back to recordPool; r is unusable after.
func (r *recorder) release() {
	r.curv.release()
	if r.val != nil {
		r.val.prog.Release()
	}
}

// finish measures the trained model: μ, the trace and top eigenvalue of the training risk's
// Hessian, and the regularizer accumulated so far (NaN when no iterate was sampled).
func (r *recorder) finish(ctx context.Context, batch int) (*Whitebox, error) {
	began := time.Now()
	nan := math.NaN()
	w := &Whitebox{Rows: r.opt.Rows, Probes: r.opt.Probes, EigenMethod: EigenLanczos, PowerIters: r.opt.PowerIters, PowerTol: r.opt.PowerTol, Stride: r.opt.Stride,
		Iterates: r.iterates, Eq7: nan, TrainLoss: nan, LossGap: nan, MetricGap: nan}
	if r.iterates > 0 {
		w.Eq7 = math.Sqrt(float64(r.opt.Stride) * r.sumSq)
	}
	var err error
	// The training loss from μ's forward passes over the training rows, instead of passes of
	// its own (about a seventh of an early-stopped kc1 trial).
	kind := r.task.Loss
	if w.Mu, w.TrainLoss, err = strongConvexity(ctx, r.model, r.task.Train, MuOptions{BatchSize: batch, Reduce: MaxOverBatches}, &kind, recordPool); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(r.seed, 0x3b0c5))
	tr, top, err := r.curv.traceAndTop(ctx, rng, r.opt.Probes, r.opt.PowerIters, r.opt.PowerTol)
	if err != nil {
		return nil, err
	}
	w.Trace, w.TraceStdErr, w.TopEigenvalue = tr.Mean, tr.StdErr, top.Value
	r.release()
	w.Seconds = (r.spent + time.Since(began)).Seconds()
	return w, nil
}

// The selection rules of Select.
const (
	// ByValidation picks the least objective value (Evaluation.Value): what search.Best
	// returns.
	ByValidation = "validation"
	// ByEq7 picks the least validation loss plus ζ times the Eq. 7 regularizer, the PAC-Bayes
	// paper's objective (its Eq. 7 with the Fisher distance summed over the training
	// iterates) used as the rule that returns a search's configuration.
	ByEq7 = "eq7"
)

// Select returns the index in evals of the configuration rule picks among the successful
// full-fidelity evaluations, and its score (Value, or ValLoss + ζ·Whitebox.Eq7); the first
// of equal scores wins. ByEq7 needs every such evaluation to carry a record with a finite
// regularizer (Task.Whitebox, a Candidate trained by package train): one without is an
// error naming it, never silently passed over.
func Select(evals []Evaluation, rule string, zeta float64) (int, float64, error) {
	if rule != ByValidation && rule != ByEq7 {
		return -1, math.NaN(), fmt.Errorf("convexity: selection rule %q; want %q or %q", rule, ByValidation, ByEq7)
	}
	if rule == ByEq7 && (!(zeta >= 0) || math.IsInf(zeta, 0)) {
		return -1, math.NaN(), fmt.Errorf("convexity: ζ = %v; want a finite ζ ≥ 0", zeta)
	}
	best, score := -1, math.Inf(1)
	for i, e := range evals {
		if e.Err != nil || e.Fidelity < 1 {
			continue
		}
		s := e.Value
		if rule == ByEq7 {
			if e.Whitebox == nil || math.IsNaN(e.Whitebox.Eq7) || math.IsInf(e.Whitebox.Eq7, 0) {
				return -1, math.NaN(), fmt.Errorf("convexity: Eq. 7 selection: the evaluation of %s has no regularizer (record %v)", e.Config, e.Whitebox != nil)
			}
			s = e.ValLoss + zeta*e.Whitebox.Eq7
		}
		if !math.IsNaN(s) && !math.IsInf(s, 0) && s < score {
			best, score = i, s
		}
	}
	if best < 0 {
		return -1, math.NaN(), errors.New("convexity: no successful full-fidelity evaluation to select from")
	}
	return best, score, nil
}
