package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	katib "github.com/kubeflow/katib/pkg/apis/controller/experiments/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// codecs decode YAML or JSON into the registered API types the way the API server does for
// a request with fieldValidation=Strict: an unknown, misspelt or duplicate field is an error.
var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{batchv1.AddToScheme, corev1.AddToScheme, katib.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict)
}()

func decode(data []byte) (runtime.Object, error) {
	obj, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	return obj, err
}

func decodeFile(t *testing.T, path string) runtime.Object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := decode(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// testDSN stands for the store's DSN, which the pods take from a secret.
const testDSN = "postgres://hyperflat@db:5432/hyperflat"

// checkJob checks what the API server's validation would reject in a hyperflat Job, and
// that every pod's command expands (PodCommand), and returns pod 0's command.
func checkJob(t *testing.T, path string, j *batchv1.Job, trial bool) []string {
	t.Helper()
	if !trial && !dns1123.MatchString(j.Name) {
		t.Errorf("%s: metadata.name %q is not a DNS-1123 label", path, j.Name)
	}
	s := j.Spec
	if rp := s.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever {
		t.Errorf("%s: a Job's restartPolicy must be OnFailure or Never, not %q", path, rp)
	}
	if c, p := s.Completions, s.Parallelism; c != nil && p != nil && *p > *c {
		t.Errorf("%s: parallelism %d > completions %d", path, *p, *c)
	}
	cs := s.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name == "" || cs[0].Image == "" || len(cs[0].Command) < 2 || cs[0].Command[0] != "hyperflat" {
		t.Fatalf("%s: want one container with a name, an image and a hyperflat command: %+v", path, cs)
	}
	volumes := map[string]bool{}
	for _, v := range s.Template.Spec.Volumes {
		volumes[v.Name] = true
	}
	for _, m := range cs[0].VolumeMounts {
		if !volumes[m.Name] {
			t.Errorf("%s: volume mount %q has no volume", path, m.Name)
		}
	}
	indices := 1
	if s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion {
		if s.Completions == nil {
			t.Fatalf("%s: an Indexed Job needs spec.completions", path)
		}
		indices = int(*s.Completions)
		if _, err := IndexedJob(j, indices); err != nil { // its --shard matches its completions
			t.Error(err)
		}
	}
	var first []string
	for i := 0; i < indices; i++ {
		cmd, err := PodCommand(j, i, map[string]string{"HYPERFLAT_STORE": testDSN})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if i == 0 {
			first = cmd
		}
	}
	return first
}

func TestJobsDecodeStrictlyIntoBatchV1(t *testing.T) {
	files, _ := filepath.Glob("kubernetes/*.yaml")
	if len(files) < 2 {
		t.Fatalf("deploy/kubernetes has %d manifests, want the indexed and the workers job", len(files))
	}
	indexed := 0
	for _, f := range files {
		j, ok := decodeFile(t, f).(*batchv1.Job)
		if !ok {
			t.Errorf("%s is not a batch/v1 Job", f)
			continue
		}
		checkJob(t, f, j, false)
		if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
			indexed++
		}
	}
	if indexed == 0 {
		t.Error("no Indexed Job among the manifests")
	}
}

func TestKatibExperimentDecodesStrictly(t *testing.T) {
	const path = "katib/experiment.yaml"
	e, ok := decodeFile(t, path).(*katib.Experiment)
	if !ok {
		t.Fatalf("%s is not a Katib v1beta1 Experiment", path)
	}
	if !dns1123.MatchString(e.Name) {
		t.Errorf("metadata.name %q", e.Name)
	}
	s := e.Spec
	if s.Objective == nil || s.Objective.ObjectiveMetricName == "" || s.Algorithm == nil || s.Algorithm.AlgorithmName == "" {
		t.Fatalf("objective %+v, algorithm %+v", s.Objective, s.Algorithm)
	}
	if s.ParallelTrialCount == nil || s.MaxTrialCount == nil || *s.ParallelTrialCount < 1 || *s.MaxTrialCount < *s.ParallelTrialCount {
		t.Errorf("trial counts %v/%v", s.ParallelTrialCount, s.MaxTrialCount)
	}
	params := map[string]bool{}
	for _, p := range s.Parameters {
		params[p.Name] = true
	}
	tt := s.TrialTemplate
	if tt == nil || tt.TrialSpec == nil {
		t.Fatal("no trial template")
	}
	declared := map[string]bool{}
	for _, tp := range tt.TrialParameters {
		declared[tp.Name] = true
		if !params[tp.Reference] {
			t.Errorf("trial parameter %s refers to %q, not a parameter of the experiment", tp.Name, tp.Reference)
		}
	}
	// The trial template is unstructured in the Experiment; Katib creates it as a Job, so it
	// must decode strictly as one too, its placeholders substituted.
	raw, err := json.Marshal(tt.TrialSpec.Object)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\$\{trialParameters\.([A-Za-z0-9_]+)\}`).FindAllStringSubmatch(string(raw), -1) {
		if !declared[m[1]] {
			t.Errorf("the trial template uses ${trialParameters.%s}, which is not declared", m[1])
		}
	}
	obj, err := decode(raw)
	if err != nil {
		t.Fatalf("trialSpec: %v", err)
	}
	j, ok := obj.(*batchv1.Job)
	if !ok {
		t.Fatalf("the trial template is a %T, want a batch/v1 Job", obj)
	}
	checkJob(t, path, j, true)
	if tt.PrimaryContainerName != j.Spec.Template.Spec.Containers[0].Name {
		t.Errorf("primaryContainerName %q is not the trial's container", tt.PrimaryContainerName)
	}
}

// TestStrictDecodingRejectsMistakes: a misspelt or duplicated field in a manifest is an error
// (the decoding above would otherwise pass whatever it ignores).
func TestStrictDecodingRejectsMistakes(t *testing.T) {
	job, err := os.ReadFile("kubernetes/indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exp, err := os.ReadFile("katib/experiment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, doc, old, new, want string }{
		{"misspelt Job field", string(job), "completionMode:", "completionsMode:", `unknown field "spec.completionsMode"`},
		{"misplaced container field", string(job), "restartPolicy: OnFailure", "restartPolicy: OnFailure\n      restartPolicies: Never", `unknown field "spec.template.spec.restartPolicies"`},
		{"duplicate field", string(job), "  parallelism: 4\n", "  parallelism: 4\n  parallelism: 2\n", `key "parallelism" already set`},
		{"wrong case", string(job), "backoffLimit:", "BackoffLimit:", `unknown field "spec.BackoffLimit"`},
		{"misspelt Experiment field", string(exp), "parallelTrialCount:", "parallelTrialsCount:", `unknown field "spec.parallelTrialsCount"`},
		{"misspelt feasible space", string(exp), "distribution: logUniform", "distrib: logUniform", `unknown field "spec.parameters[1].feasibleSpace.distrib"`},
	}
	for _, c := range cases {
		if !strings.Contains(c.doc, c.old) {
			t.Fatalf("%s: the manifest has no %q", c.name, c.old)
		}
		_, err := decode([]byte(strings.Replace(c.doc, c.old, c.new, 1)))
		if err == nil || !runtime.IsStrictDecodingError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a strict decoding error naming %s", c.name, err, c.want)
		}
	}
}

// TestIndexedJobForNShards renders the Indexed Job for several shard counts and checks the
// command of every index: the manifest's command with --shard=I/N and the store's DSN, each
// shard once.
func TestIndexedJobForNShards(t *testing.T) {
	const path = "kubernetes/indexed-job.yaml"
	base := decodeFile(t, path).(*batchv1.Job)
	template := slices.Clone(base.Spec.Template.Spec.Containers[0].Command)
	for _, n := range []int{1, 3, 4, 120} {
		j, err := IndexedJob(base, n)
		if err != nil {
			t.Fatal(err)
		}
		if *j.Spec.Completions != int32(n) || *j.Spec.Parallelism != min(*base.Spec.Parallelism, int32(n)) {
			t.Errorf("%d shards: completions %d, parallelism %d", n, *j.Spec.Completions, *j.Spec.Parallelism)
		}
		seen := map[string]bool{}
		for i := 0; i < n; i++ {
			cmd, err := PodCommand(j, i, map[string]string{"HYPERFLAT_STORE": testDSN})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, a := range template {
				switch {
				case a == "--store=$(HYPERFLAT_STORE)":
					a = "--store=" + testDSN
				case strings.HasPrefix(a, "--shard="):
					a = fmt.Sprintf("--shard=%d/%d", i, n)
				}
				want = append(want, a)
			}
			if !slices.Equal(cmd, want) {
				t.Errorf("%d shards, index %d runs\n%q\nwant\n%q", n, i, cmd, want)
			}
			for _, a := range cmd {
				if strings.HasPrefix(a, "--shard=") {
					seen[a] = true
				}
			}
		}
		if len(seen) != n {
			t.Errorf("%d shards: the pods pass %d distinct --shard values", n, len(seen))
		}
		if _, err := PodCommand(j, n, nil); err == nil {
			t.Errorf("%d shards: index %d has a command", n, n)
		}
	}
	if !slices.Equal(base.Spec.Template.Spec.Containers[0].Command, template) {
		t.Error("IndexedJob changed the Job it was given")
	}
	// What the renderer refuses.
	workers := decodeFile(t, "kubernetes/workers-job.yaml").(*batchv1.Job)
	mismatched := base.DeepCopy()
	*mismatched.Spec.Completions = 5
	for name, c := range map[string]struct {
		job  *batchv1.Job
		n    int
		want string
	}{
		"no shards":          {base, 0, "0 shards"},
		"too many shards":    {base, MaxShards + 1, "shards"},
		"not indexed":        {workers, 4, "not an Indexed Job"},
		"completions differ": {mismatched, 4, "has 5 completions"},
		"nil":                {nil, 4, "nil Job"},
	} {
		if _, err := IndexedJob(c.job, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	if _, err := PodCommand(base, 0, nil); err == nil || !strings.Contains(err.Error(), "HYPERFLAT_STORE") {
		t.Errorf("a pod without its secret's value: %v", err)
	}
}

// TestHyperflatParsesEachIndexsCommand runs every pod's command of the Indexed Job for 4
// shards through the real hyperflat command-line parser (--help appended: it parses the
// flags and stops), with a hyperflat built from this repository (or $HYPERFLAT_BIN).
func TestHyperflatParsesEachIndexsCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hyperflat")
	}
	bin := os.Getenv("HYPERFLAT_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "hyperflat")
		build := exec.Command("go", "build", "-o", bin, "./cmd/hyperflat")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/hyperflat: %v\n%s", err, out)
		}
	}
	j, err := IndexedJob(decodeFile(t, "kubernetes/indexed-job.yaml").(*batchv1.Job), 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		cmd, err := PodCommand(j, i, map[string]string{"HYPERFLAT_STORE": testDSN})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, append(cmd[1:], "--help")...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--shard") {
			t.Errorf("index %d: hyperflat %s: %v\n%s", i, strings.Join(cmd[1:], " "), err, out)
		}
	}
	// The parser is no rubber stamp: a misspelt flag fails.
	if out, err := exec.Command(bin, "run", "ahsc", "--shards="+strconv.Itoa(1)+"/4", "--help").CombinedOutput(); err == nil {
		t.Errorf("a misspelt flag parsed:\n%s", out)
	}
}
