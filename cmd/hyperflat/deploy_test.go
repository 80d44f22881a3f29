package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/experiments/experimenttest"
	"github.com/hyperflat/hyperflat/search"
	"gopkg.in/yaml.v3"
)

// The deploy/ manifests are checked here against schemas of our own — strict decoding into
// the subset of the Kubernetes and Katib types they use rejects unknown or misspelt fields —
// and every hyperflat command in them is parsed by the real flag parser, and the Katib trial
// run. The module in deploy/ checks them against the real API types (k8s.io/api's batch/v1
// Job, Katib's v1beta1 Experiment) and renders the Indexed Job for any number of shards.

type k8sMeta struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace"`
	Labels    map[string]string `yaml:"labels"`
}

type k8sEnvVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type k8sContainer struct {
	Name      string      `yaml:"name"`
	Image     string      `yaml:"image"`
	Command   []string    `yaml:"command"`
	Args      []string    `yaml:"args"`
	Env       []k8sEnvVar `yaml:"env"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type k8sPodTemplate struct {
	Metadata k8sMeta `yaml:"metadata"`
	Spec     struct {
		RestartPolicy string         `yaml:"restartPolicy"`
		Containers    []k8sContainer `yaml:"containers"`
		Volumes       []struct {
			Name                  string `yaml:"name"`
			PersistentVolumeClaim *struct {
				ClaimName string `yaml:"claimName"`
			} `yaml:"persistentVolumeClaim"`
		} `yaml:"volumes"`
	} `yaml:"spec"`
}

type k8sJobSpec struct {
	CompletionMode string         `yaml:"completionMode"`
	Completions    *int           `yaml:"completions"`
	Parallelism    *int           `yaml:"parallelism"`
	BackoffLimit   *int           `yaml:"backoffLimit"`
	Template       k8sPodTemplate `yaml:"template"`
}

type k8sJob struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   k8sMeta    `yaml:"metadata"`
	Spec       k8sJobSpec `yaml:"spec"`
}

type katibExperiment struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   k8sMeta `yaml:"metadata"`
	Spec       struct {
		Objective struct {
			Type                  string   `yaml:"type"`
			Goal                  *float64 `yaml:"goal"`
			ObjectiveMetricName   string   `yaml:"objectiveMetricName"`
			AdditionalMetricNames []string `yaml:"additionalMetricNames"`
		} `yaml:"objective"`
		Algorithm struct {
			AlgorithmName string `yaml:"algorithmName"`
		} `yaml:"algorithm"`
		ParallelTrialCount   int `yaml:"parallelTrialCount"`
		MaxTrialCount        int `yaml:"maxTrialCount"`
		MaxFailedTrialCount  int `yaml:"maxFailedTrialCount"`
		MetricsCollectorSpec struct {
			Collector struct {
				Kind string `yaml:"kind"`
			} `yaml:"collector"`
		} `yaml:"metricsCollectorSpec"`
		Parameters    []katibParameter `yaml:"parameters"`
		TrialTemplate struct {
			PrimaryContainerName string `yaml:"primaryContainerName"`
			TrialParameters      []struct {
				Name        string `yaml:"name"`
				Reference   string `yaml:"reference"`
				Description string `yaml:"description"`
			} `yaml:"trialParameters"`
			TrialSpec k8sJob `yaml:"trialSpec"`
		} `yaml:"trialTemplate"`
	} `yaml:"spec"`
}

type katibParameter struct {
	Name          string `yaml:"name"`
	ParameterType string `yaml:"parameterType"`
	FeasibleSpace struct {
		Min          string   `yaml:"min"`
		Max          string   `yaml:"max"`
		List         []string `yaml:"list"`
		Step         string   `yaml:"step"`
		Distribution string   `yaml:"distribution"`
	} `yaml:"feasibleSpace"`
}

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func decodeStrict(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkJob validates a Job and returns its hyperflat command.
func checkJob(t *testing.T, path string, j k8sJob, trial bool) []string {
	t.Helper()
	if j.APIVersion != "batch/v1" || j.Kind != "Job" {
		t.Errorf("%s: %s %s, want batch/v1 Job", path, j.APIVersion, j.Kind)
	}
	if !trial && !dns1123.MatchString(j.Metadata.Name) {
		t.Errorf("%s: metadata.name %q is not a DNS-1123 label", path, j.Metadata.Name)
	}
	switch j.Spec.CompletionMode {
	case "", "NonIndexed":
	case "Indexed":
		if j.Spec.Completions == nil {
			t.Errorf("%s: an Indexed Job needs spec.completions", path)
		}
	default:
		t.Errorf("%s: completionMode %q", path, j.Spec.CompletionMode)
	}
	if c, p := j.Spec.Completions, j.Spec.Parallelism; c != nil && p != nil && *p > *c {
		t.Errorf("%s: parallelism %d > completions %d", path, *p, *c)
	}
	ps := j.Spec.Template.Spec
	if rp := ps.RestartPolicy; rp != "OnFailure" && rp != "Never" {
		t.Errorf("%s: a Job's restartPolicy must be OnFailure or Never, not %q", path, rp)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", path, len(ps.Containers))
	}
	c := ps.Containers[0]
	if c.Name == "" || c.Image == "" || len(c.Command) < 2 || c.Command[0] != "hyperflat" {
		t.Errorf("%s: container %+v needs a name, an image and a hyperflat command", path, c)
	}
	volumes := map[string]bool{}
	for _, v := range ps.Volumes {
		volumes[v.Name] = true
	}
	for _, m := range c.VolumeMounts {
		if !volumes[m.Name] {
			t.Errorf("%s: volume mount %q has no volume", path, m.Name)
		}
	}
	env := map[string]bool{"JOB_COMPLETION_INDEX": j.Spec.CompletionMode == "Indexed"}
	for _, e := range c.Env {
		env[e.Name] = true
	}
	for _, arg := range c.Command {
		for _, m := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(arg, -1) {
			if !env[m[1]] {
				t.Errorf("%s: %q refers to $(%s), which the pod does not define", path, arg, m[1])
			}
		}
	}
	if j.Spec.CompletionMode == "Indexed" {
		want := fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", *j.Spec.Completions)
		if !contains(c.Command, want) {
			t.Errorf("%s: an Indexed Job of %d completions should pass %s", path, *j.Spec.Completions, want)
		}
	}
	return c.Command
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// parses checks that the CLI accepts the command's flags (with --help appended, it parses
// them and stops).
func parses(t *testing.T, path string, cmd []string, subst map[string]string) {
	t.Helper()
	args := make([]string, 0, len(cmd))
	for _, a := range cmd[1:] {
		for k, v := range subst {
			a = strings.ReplaceAll(a, k, v)
		}
		args = append(args, a)
	}
	if code, _, errs := runCLI(append(args, "--help")...); code != 0 {
		t.Errorf("%s: hyperflat %s: exit %d: %s", path, strings.Join(args, " "), code, errs)
	}
}

func TestDeployJobs(t *testing.T) {
	files, _ := filepath.Glob("../../deploy/kubernetes/*.yaml")
	if len(files) < 2 {
		t.Fatalf("deploy/kubernetes has %d manifests, want the indexed and the workers job", len(files))
	}
	indexed := false
	for _, f := range files {
		var j k8sJob
		decodeStrict(t, f, &j)
		cmd := checkJob(t, f, j, false)
		indexed = indexed || j.Spec.CompletionMode == "Indexed"
		parses(t, f, cmd, map[string]string{"$(JOB_COMPLETION_INDEX)": "1", "$(HYPERFLAT_STORE)": "/tmp/x.db"})
	}
	if !indexed {
		t.Error("no Indexed Job among the manifests")
	}
}

// katibMetric is Katib's default StdOut metrics-collector filter.
var katibMetric = regexp.MustCompile(`([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?)`)

// TestKatibExperiment validates the Katib Experiment against the ahsc search space it
// names, runs its trial command (quick preset, few epochs) and parses the output with
// Katib's default metric regex.
func TestKatibExperiment(t *testing.T) {
	const path = "../../deploy/katib/experiment.yaml"
	var e katibExperiment
	decodeStrict(t, path, &e)
	s := e.Spec
	if e.APIVersion != "kubeflow.org/v1beta1" || e.Kind != "Experiment" || !dns1123.MatchString(e.Metadata.Name) {
		t.Errorf("%s %s %q", e.APIVersion, e.Kind, e.Metadata.Name)
	}
	if s.Objective.Type != "minimize" && s.Objective.Type != "maximize" {
		t.Errorf("objective type %q", s.Objective.Type)
	}
	if s.MetricsCollectorSpec.Collector.Kind != "StdOut" {
		t.Errorf("collector %q, want StdOut", s.MetricsCollectorSpec.Collector.Kind)
	}
	if s.ParallelTrialCount < 1 || s.MaxTrialCount < s.ParallelTrialCount || s.Algorithm.AlgorithmName == "" {
		t.Errorf("trial counts %d/%d, algorithm %q", s.ParallelTrialCount, s.MaxTrialCount, s.Algorithm.AlgorithmName)
	}
	cmd := checkJob(t, path, s.TrialTemplate.TrialSpec, true)
	if s.TrialTemplate.PrimaryContainerName != s.TrialTemplate.TrialSpec.Spec.Template.Spec.Containers[0].Name {
		t.Errorf("primaryContainerName %q is not the trial's container", s.TrialTemplate.PrimaryContainerName)
	}
	pre := prescan(cmd[1:], trialSpaceFlags...) // the space is the dataset's under the protocol
	cfg := experimenttest.DefaultConfig(t, ahsc.DefaultConfig, experiments.Quick)
	cfg.Dataset = pre["dataset"]
	if p, ok := pre["protocol"]; ok {
		cfg.Protocol = p
	}
	dataset := cfg.Dataset
	space, err := ahsc.TrialSpace(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mid := katibMidpoints(t, s.Parameters, space, dataset)
	subst := map[string]string{}
	for _, tp := range s.TrialTemplate.TrialParameters {
		v, ok := mid[tp.Reference]
		if !ok {
			t.Errorf("trial parameter %s refers to unknown parameter %q", tp.Name, tp.Reference)
		}
		subst["${trialParameters."+tp.Name+"}"] = v
	}
	var args []string
	for _, a := range cmd[1:] {
		for k, v := range subst {
			a = strings.ReplaceAll(a, k, v)
		}
		if strings.Contains(a, "${") {
			t.Errorf("argument %q has an undeclared placeholder", a)
		}
		if a == "--preset=paper" {
			a = "--preset=quick" // a short trial for the test
		}
		args = append(args, a)
	}
	code, out, errs := runCLI(append(args, "--epochs=3")...)
	if code != 0 {
		t.Fatalf("hyperflat %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	metrics := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		m := katibMetric.FindStringSubmatch(line)
		if m == nil || m[0] != line {
			t.Errorf("line %q is not a whole Katib metric", line)
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Errorf("line %q: value %q does not parse", line, m[2])
		}
		metrics[m[1]] = v
	}
	for _, name := range append([]string{s.Objective.ObjectiveMetricName}, s.Objective.AdditionalMetricNames...) {
		if _, ok := metrics[name]; !ok {
			t.Errorf("the trial does not print %s (printed %v)", name, metrics)
		}
	}
	if v := metrics["test_accuracy"]; v < 0 || v > 1 {
		t.Errorf("test_accuracy %v", v)
	}
	if metrics["strong_convexity"] <= 0 {
		t.Errorf("strong_convexity %v, want > 0", metrics["strong_convexity"])
	}
}

// katibMidpoints checks that every Katib parameter is a dimension of the space, with its
// bounds, kind and scale, and returns a value inside each parameter's range.
func katibMidpoints(t *testing.T, params []katibParameter, space search.Space, dataset string) map[string]string {
	t.Helper()
	// Every parameter is a dimension of the space, with its bounds and kind.
	byName := map[string]search.Param{}
	for _, p := range space {
		byName[p.Name] = p
	}
	if len(params) != len(space) {
		t.Errorf("%d parameters, the space has %d", len(params), len(space))
	}
	mid := map[string]string{}
	for _, p := range params {
		d, ok := byName[p.Name]
		if !ok {
			t.Errorf("parameter %q is not in the %s space", p.Name, dataset)
			continue
		}
		lo, err1 := strconv.ParseFloat(p.FeasibleSpace.Min, 64)
		hi, err2 := strconv.ParseFloat(p.FeasibleSpace.Max, 64)
		wantType := map[search.Kind]string{search.Float: "double", search.Int: "int", search.Categorical: "categorical"}[d.Kind]
		if p.ParameterType != wantType || err1 != nil || err2 != nil || lo != d.Low || hi != d.High {
			t.Errorf("parameter %s: %s [%s, %s], the space's is %s [%g, %g]", p.Name, p.ParameterType, p.FeasibleSpace.Min, p.FeasibleSpace.Max, wantType, d.Low, d.High)
		}
		if (p.FeasibleSpace.Distribution == "logUniform") != d.Log {
			t.Errorf("parameter %s: distribution %q, the space's log scale is %v", p.Name, p.FeasibleSpace.Distribution, d.Log)
		}
		if d.Kind == search.Int {
			mid[p.Name] = strconv.Itoa(int((lo + hi) / 2))
		} else if d.Log {
			mid[p.Name] = strconv.FormatFloat(math.Sqrt(lo*hi), 'g', 6, 64) // inside [lo, hi] after rounding
		} else {
			mid[p.Name] = strconv.FormatFloat((lo+hi)/2, 'g', -1, 64)
		}
	}
	return mid
}
