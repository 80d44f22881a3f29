package convexity

import (
	"context"
	"math"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/train"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// recordingOptimizer is Adam that keeps a copy of the weights before every step: the
// iterates θ_0 … θ_{T−1} the regularizer is summed over, seen from outside package train.
type recordingOptimizer struct {
	adam     *samplers.Adam // a field, not embedded: its other methods would bypass Step
	iterates [][]float64
}

func (o *recordingOptimizer) Step(params []*tensor.Dense, grads []G.Value) error {
	var flat []float64
	for _, p := range params {
		f, err := graph.ToFloat64s(p)
		if err != nil {
			return err
		}
		flat = append(flat, f...)
	}
	o.iterates = append(o.iterates, flat)
	return o.adam.Step(params, grads)
}

// tinyTask is a 4-4-3 MLP (35 parameters) on 30 training rows, trained 3 epochs with Adam in
// batches of 8 (4 steps an epoch, 12 in all); rec, when set, receives each Build's optimizer.
func tinyTask(rec *[]*recordingOptimizer) *Task { return tinyTaskIn(tensor.Float64, rec) }

// tinyTaskIn is tinyTask computing in dt.
func tinyTaskIn(dt tensor.Dtype, rec *[]*recordingOptimizer) *Task {
	return &Task{
		Space: search.Space{search.FloatParam("lr", 1e-3, 1e-1, true)},
		Train: blobs(11, 10, 3, 4), Val: blobs(12, 8, 3, 4), Test: blobs(13, 8, 3, 4),
		Metric: Accuracy, Epochs: 3, Seed: 5,
		Build: func(cfg search.Config, s uint64) (*Candidate, error) {
			net, err := layers.NewNet(dt, s)
			if err != nil {
				return nil, err
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 4, Hidden: []int{4}, Out: 3})
			if err != nil {
				return nil, err
			}
			o := &recordingOptimizer{adam: samplers.NewAdam(cfg.Float("lr"))}
			if rec != nil {
				*rec = append(*rec, o)
			}
			return &Candidate{Model: m, Optimizer: o, BatchSize: 8}, nil
		},
	}
}

// fdGradient is the gradient of the mean risk on ds at θ by central differences of the loss
// package train's evaluator computes: another program than the recorder's gradients.
func fdGradient(t *testing.T, m layers.FeatureModel, ds *datasets.Dataset, theta []float64) []float64 {
	t.Helper()
	ev, err := trainEvaluator(m, ds)
	if err != nil {
		t.Fatal(err)
	}
	vals := paramTensors(m)
	loss := func(x []float64) float64 {
		if err := graph.SetFlat(vals, x); err != nil {
			t.Fatal(err)
		}
		_, l, err := ev.Evaluate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	const h = 1e-5
	g := make([]float64, len(theta))
	x := append([]float64(nil), theta...)
	for i := range x {
		x[i] = theta[i] + h
		up := loss(x)
		x[i] = theta[i] - h
		down := loss(x)
		x[i] = theta[i]
		g[i] = (up - down) / (2 * h)
	}
	return g
}

func trainEvaluator(m layers.FeatureModel, ds *datasets.Dataset) (*train.Evaluator, error) {
	return train.NewEvaluatorMode(m, ds, m.Head().Out, ds.N, layers.Eval)
}

func paramTensors(m layers.FeatureModel) []*tensor.Dense {
	var vals []*tensor.Dense
	for _, p := range m.Net().Params() {
		vals = append(vals, p.Value)
	}
	return vals
}

// handRegularizer is √(stride·Σ‖a_t‖²) over every stride-th recorded iterate, each a_t by
// finite differences on a fresh copy of the model.
func handRegularizer(t *testing.T, task *Task, cfg search.Config, iterates [][]float64, stride int) float64 {
	t.Helper()
	c, err := task.build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for i := 0; i < len(iterates); i += stride {
		gt := fdGradient(t, c.Model, task.Train, iterates[i])
		gv := fdGradient(t, c.Model, task.Val, iterates[i])
		for j := range gt {
			sum += (gt[j] - gv[j]) * (gt[j] - gv[j])
		}
	}
	return math.Sqrt(float64(stride) * sum)
}

func TestWhiteboxRegularizerAgainstAHandAccumulatedSum(t *testing.T) {
	var opts []*recordingOptimizer
	task := tinyTask(&opts)
	cfg := search.Config{Space: task.Space, Values: []float64{0.05}}
	for _, stride := range []int{1, 3} {
		opts = nil
		task.Whitebox = &WhiteboxOptions{Stride: stride}
		e := task.Evaluate(context.Background(), cfg, 1)
		if e.Err != nil || e.Whitebox == nil {
			t.Fatalf("stride %d: %v, record %v", stride, e.Err, e.Whitebox)
		}
		w := e.Whitebox
		iterates := opts[len(opts)-1].iterates
		if len(iterates) != 12 {
			t.Fatalf("%d optimizer steps; the tiny task takes 12", len(iterates))
		}
		want := handRegularizer(t, task, cfg, iterates, stride)
		if w.Stride != stride || w.Iterates != (12+stride-1)/stride {
			t.Errorf("stride %d: recorded stride %d over %d iterates", stride, w.Stride, w.Iterates)
		}
		if math.Abs(w.Eq7-want) > 1e-6*want {
			t.Errorf("stride %d: Eq. 7 regularizer %.10g, hand-accumulated %.10g", stride, w.Eq7, want)
		}
		// The comparison can tell one iterate more or less: the sums over θ_1…θ_T and
		// θ_0…θ_{T−2} are as far from the record as this.
		if stride == 1 {
			shifted := handRegularizer(t, task, cfg, iterates[1:], 1)
			short := handRegularizer(t, task, cfg, iterates[:len(iterates)-1], 1)
			for _, off := range []float64{shifted, short} {
				if math.Abs(off-want) < 100*1e-6*want {
					t.Errorf("an off-by-one sum %.10g is within the tolerance of %.10g: the test could not tell", off, want)
				}
			}
		}
		t.Logf("stride %d: Eq. 7 %.8g over %d iterates (hand %.8g)", stride, w.Eq7, w.Iterates, want)
	}
}

func TestWhiteboxCurvatureAgainstTheExactHessian(t *testing.T) {
	task := tinyTask(nil)
	cfg := search.Config{Space: task.Space, Values: []float64{0.05}}
	opt, err := WhiteboxOptions{Probes: 4000, PowerIters: 5000, PowerTol: 1e-12}.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	c, _, rec, err := task.fit(context.Background(), cfg, task.Epochs, true, &opt)
	if err != nil {
		t.Fatal(err)
	}
	h := fullHessian(t, rec.curv)
	n := rec.curv.Dim()
	if n != 35 {
		t.Fatalf("%d parameters; the tiny MLP has 35", n)
	}
	trace := mat.Trace(h)
	var eig mat.EigenSym
	if !eig.Factorize(h, false) {
		t.Fatal("eigendecomposition failed")
	}
	top := 0.0
	for _, v := range eig.Values(nil) {
		if math.Abs(v) > math.Abs(top) {
			top = v
		}
	}
	w, err := rec.finish(context.Background(), c.BatchSize)
	if err != nil {
		t.Fatal(err)
	}
	// 4000 probes: the Hutchinson mean within 4 of its standard errors and 5% of the trace.
	if math.Abs(w.Trace-trace) > 4*w.TraceStdErr || math.Abs(w.Trace-trace) > 0.05*math.Abs(trace) {
		t.Errorf("Hutchinson tr H = %v ± %v, exact %v", w.Trace, w.TraceStdErr, trace)
	}
	if math.Abs(w.TopEigenvalue-top) > 1e-6*math.Abs(top) || w.EigenMethod != EigenLanczos {
		t.Errorf("%s %.10g, gonum's eigenvalue of largest magnitude %.10g", w.EigenMethod, w.TopEigenvalue, top)
	}
	mu, err := StrongConvexity(context.Background(), c.Model, task.Train, MuOptions{BatchSize: c.BatchSize})
	if err != nil || w.Mu != mu {
		t.Errorf("μ %v, StrongConvexity %v (%v)", w.Mu, mu, err)
	}
	if w.Probes != 4000 || w.PowerIters != 5000 || w.PowerTol != 1e-12 {
		t.Errorf("recorded settings %d probes, %d iterations, tol %v", w.Probes, w.PowerIters, w.PowerTol)
	}
	t.Logf("tr H exact %.8g, Hutchinson %.8g ± %.2g; λ exact %.10g, %s %.10g; μ %.6g", trace, w.Trace, w.TraceStdErr, top, w.EigenMethod, w.TopEigenvalue, w.Mu)
}

func TestWhiteboxGapsAndDeterminism(t *testing.T) {
	task := tinyTask(nil)
	task.Whitebox = &WhiteboxOptions{}
	cfg := search.Config{Space: task.Space, Values: []float64{0.02}}
	a := task.Evaluate(context.Background(), cfg, 1)
	b := task.Evaluate(context.Background(), cfg, 1)
	if a.Err != nil || b.Err != nil {
		t.Fatal(a.Err, b.Err)
	}
	wa, wb := *a.Whitebox, *b.Whitebox
	wa.Seconds, wb.Seconds = 0, 0
	if wa != wb {
		t.Errorf("two evaluations of one configuration recorded\n%+v\n%+v", wa, wb)
	}
	if math.Abs(wa.LossGap-(a.ValLoss-wa.TrainLoss)) > 1e-15 || wa.MetricGap != a.ValMetric-a.TestMetric {
		t.Errorf("gaps %v, %v from val loss %v, train loss %v, val metric %v, test metric %v", wa.LossGap, wa.MetricGap, a.ValLoss, wa.TrainLoss, a.ValMetric, a.TestMetric)
	}
	if !(wa.TrainLoss > 0) || wa.Probes != DefaultProbes || wa.Stride != DefaultStrideEpochs*4 || wa.Iterates != 1 || wa.Rows != DefaultRows {
		t.Errorf("record %+v: want a positive training loss and the default settings (12 steps, 4 an epoch: 1 iterate at stride %d)", wa, DefaultStrideEpochs*4)
	}
	task.Whitebox = nil
	if plain := task.Evaluate(context.Background(), cfg, 1); plain.ValLoss != a.ValLoss || plain.TestMetric != a.TestMetric || plain.Whitebox != nil {
		t.Errorf("recording changed the training: validation loss %v → %v, test metric %v → %v", plain.ValLoss, a.ValLoss, plain.TestMetric, a.TestMetric)
	}
	task.Whitebox = &WhiteboxOptions{}
	low := task.Evaluate(context.Background(), cfg, 0.5)
	if low.Err != nil || low.Whitebox != nil {
		t.Errorf("a lower-fidelity evaluation recorded %v (%v)", low.Whitebox, low.Err)
	}
	task.Whitebox = &WhiteboxOptions{Probes: 1}
	if e := task.Evaluate(context.Background(), cfg, 1); e.Err == nil {
		t.Error("a record of 1 Hutchinson probe was accepted")
	}
}

// TestWhiteboxPoolSameRecord: a record computed in the buffers of the records before it
// (recordPool, holding another configuration's values) is the one computed in fresh memory,
// bit for bit, in float64 and float32.
func TestWhiteboxPoolSameRecord(t *testing.T) {
	saved := recordPool
	defer func() { recordPool = saved }()
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		task := tinyTaskIn(dt, nil)
		task.Whitebox = &WhiteboxOptions{Stride: 3}
		cfg := func(lr float64) search.Config { return search.Config{Space: task.Space, Values: []float64{lr}} }
		recordPool = nil
		fresh := task.Evaluate(context.Background(), cfg(0.02), 1)
		recordPool = graph.NewPool(1 << 26)
		other := task.Evaluate(context.Background(), cfg(0.07), 1)
		if recordPool.Bytes() == 0 {
			t.Fatalf("%v: a record gave the pool nothing back", dt)
		}
		pooled := task.Evaluate(context.Background(), cfg(0.02), 1)
		if fresh.Err != nil || other.Err != nil || pooled.Err != nil {
			t.Fatal(fresh.Err, other.Err, pooled.Err)
		}
		a, b := *fresh.Whitebox, *pooled.Whitebox
		a.Seconds, b.Seconds = 0, 0
		if a != b || a.Iterates != 4 {
			t.Errorf("%v: the record in fresh memory\n%+v\nin the pool's\n%+v", dt, a, b)
		}
	}
}

func TestSelectByHand(t *testing.T) {
	nan := math.NaN()
	rec := func(eq7 float64) *Whitebox { return &Whitebox{Eq7: eq7} }
	evals := []Evaluation{
		{Fidelity: 1, Value: -0.90, ValLoss: 0.30, Whitebox: rec(2.0)},                       // eq7 0.30+0.1·2 = 0.50
		{Fidelity: 1, Value: -0.95, ValLoss: 0.25, Whitebox: rec(4.0)},                       // eq7 0.65; best validation
		{Fidelity: 1, Value: -0.80, ValLoss: 0.45, Whitebox: rec(0.5)},                       // eq7 0.50, a tie: the first wins
		{Fidelity: 0.5, Value: -0.99, ValLoss: 0.01, Whitebox: nil},                          // a lower rung: never selected
		{Fidelity: 1, Value: nan, ValLoss: nan, Err: errNilTask},                             // failed
		{Fidelity: 1, Value: -0.97, ValLoss: 0.20, Whitebox: rec(0.0), Err: ErrTrialTimeout}, // failed
	}
	if i, s, err := Select(evals, ByValidation, 0.1); err != nil || i != 1 || s != -0.95 {
		t.Errorf("validation: %d, %v, %v; want 1, −0.95", i, s, err)
	}
	if i, s, err := Select(evals, ByEq7, 0.1); err != nil || i != 0 || math.Abs(s-0.5) > 1e-15 {
		t.Errorf("eq7 at ζ 0.1: %d, %v, %v; want 0, 0.5", i, s, err)
	}
	if i, _, err := Select(evals, ByEq7, 0); err != nil || i != 1 {
		t.Errorf("eq7 at ζ 0 is the least validation loss: %d (%v); want 1", i, err)
	}
	evals[2].Whitebox = nil
	if _, _, err := Select(evals, ByEq7, 0.1); err == nil {
		t.Error("an evaluation without a record was passed over")
	}
	for _, bad := range []float64{-1, nan, math.Inf(1)} {
		if _, _, err := Select(evals[:2], ByEq7, bad); err == nil {
			t.Errorf("ζ = %v accepted", bad)
		}
	}
	if _, _, err := Select(evals[:2], "test", 0); err == nil {
		t.Error("an unknown rule accepted")
	}
	if _, _, err := Select(evals[3:5], ByValidation, 0); err == nil {
		t.Error("selected from no successful full-fidelity evaluation")
	}
}

// TestWhiteboxTrainLossIsTheTrainersLoss: the record's training loss, computed in μ's
// batches of 8 rows (the last one shorter), is the trainer's evaluation loss on Task.Train,
// in one pass, up to the rounding of a different summation (float64: far below 1e-12), for
// three classes (softmax cross-entropy) and two (one logistic output).
func TestWhiteboxTrainLossIsTheTrainersLoss(t *testing.T) {
	binary := tinyTask(nil)
	binary.Train, binary.Val, binary.Test = blobs(11, 10, 2, 4), blobs(12, 8, 2, 4), blobs(13, 8, 2, 4)
	binary.Loss = losses.Binary
	build := binary.Build
	binary.Build = func(cfg search.Config, s uint64) (*Candidate, error) {
		net, err := layers.NewNet(tensor.Float64, s)
		if err != nil {
			return nil, err
		}
		m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: 4, Hidden: []int{4}, Out: 1})
		if err != nil {
			return nil, err
		}
		c, err := build(cfg, s)
		if err != nil {
			return nil, err
		}
		c.Model = m
		return c, nil
	}
	for _, task := range []*Task{tinyTask(nil), binary} {
		trainLossCheck(t, task)
	}
}

func trainLossCheck(t *testing.T, task *Task) {
	t.Helper()
	ctx := context.Background()
	cfg := search.Config{Space: task.Space, Values: []float64{0.05}}
	opt, err := WhiteboxOptions{}.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	c, tr, rec, err := task.fit(ctx, cfg, task.Epochs, true, &opt)
	if err != nil {
		t.Fatal(err)
	}
	w, err := rec.finish(ctx, c.BatchSize)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Evaluate(ctx, task.Train, 0)
	if err != nil {
		t.Fatal(err)
	}
	val, err := tr.Evaluate(ctx, task.Val, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.TrainLoss-res.Loss) > 1e-12*res.Loss || math.Abs(w.TrainLoss-val.Loss) < 1e-6 {
		t.Errorf("%s: record's training loss %.15g, the trainer's %.15g (validation %.6g)", task.Loss, w.TrainLoss, res.Loss, val.Loss)
	}
	t.Logf("%q: training loss %.15g, the trainer's %.15g", task.Loss, w.TrainLoss, res.Loss)
}
