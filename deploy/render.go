package deploy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// IndexEnv is the variable the Job controller gives each pod of an Indexed Job: its
// completion index, 0 to completions-1.
const IndexEnv = "JOB_COMPLETION_INDEX"

// MaxShards bounds the shards IndexedJob makes: Kubernetes lets an Indexed Job of more than
// 100,000 completions run at most 10,000 pods at once, and no hyperflat run has that many
// cells.
const MaxShards = 100_000

// shardPrefix is how the manifests pass the shard: --shard=$(JOB_COMPLETION_INDEX)/N.
const shardPrefix = "--shard=$(" + IndexEnv + ")/"

// IndexedJob returns a copy of job made for n shards: completions n, parallelism at most n,
// and its container's --shard=$(JOB_COMPLETION_INDEX)/K argument (K must be the Job's own
// completions) made /n. The job must be an Indexed Job of one container with such an
// argument.
func IndexedJob(job *batchv1.Job, n int) (*batchv1.Job, error) {
	if job == nil {
		return nil, errors.New("deploy: IndexedJob of a nil Job")
	}
	if n < 1 || n > MaxShards {
		return nil, fmt.Errorf("deploy: %d shards; want 1 to %d", n, MaxShards)
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Completions == nil {
		return nil, fmt.Errorf("deploy: Job %s is not an Indexed Job with completions", job.Name)
	}
	c, err := container(job)
	if err != nil {
		return nil, err
	}
	at, k, err := shardArg(c)
	if err != nil {
		return nil, fmt.Errorf("deploy: Job %s: %w", job.Name, err)
	}
	if k != int(*s.Completions) {
		return nil, fmt.Errorf("deploy: Job %s passes %s but has %d completions: some shards would be computed by no pod, or some indices find no shard",
			job.Name, shardPrefix+strconv.Itoa(k), *s.Completions)
	}
	out := job.DeepCopy()
	completions := int32(n)
	out.Spec.Completions = &completions
	if p := out.Spec.Parallelism; p != nil && *p > completions {
		out.Spec.Parallelism = &completions
	}
	oc := &out.Spec.Template.Spec.Containers[0]
	arg := shardPrefix + strconv.Itoa(n)
	if at < len(oc.Command) {
		oc.Command[at] = arg
	} else {
		oc.Args[at-len(oc.Command)] = arg
	}
	return out, nil
}

// PodCommand returns the command line the pod of the given completion index runs: its
// container's command then args, with $(VAR) references expanded as the kubelet expands them
// (from the container's env, each value expanded by the variables before it, and the
// JOB_COMPLETION_INDEX the Job controller adds). A variable set from a secret, config map or
// field (valueFrom) takes its value from resolved. A reference to a variable the pod does not
// define is an error: the kubelet would pass it on literally.
func PodCommand(job *batchv1.Job, index int, resolved map[string]string) ([]string, error) {
	if job == nil {
		return nil, errors.New("deploy: PodCommand of a nil Job")
	}
	c, err := container(job)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			v, ok := resolved[e.Name]
			if !ok {
				return nil, fmt.Errorf("deploy: Job %s: no value given for %s, which the pod takes from a reference", job.Name, e.Name)
			}
			env[e.Name] = v
			continue
		}
		env[e.Name], _ = expand(e.Value, env) // an undefined one stays literal, as in the kubelet
	}
	if s := job.Spec; s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion {
		if s.Completions == nil || index < 0 || index >= int(*s.Completions) {
			return nil, fmt.Errorf("deploy: Job %s has no completion index %d", job.Name, index)
		}
		env[IndexEnv] = strconv.Itoa(index)
	}
	var cmd []string
	for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
		x, undefined := expand(a, env)
		if len(undefined) > 0 {
			return nil, fmt.Errorf("deploy: Job %s: %q refers to $(%s), which the pod does not define", job.Name, a, undefined[0])
		}
		cmd = append(cmd, x)
	}
	return cmd, nil
}

func container(job *batchv1.Job) (*corev1.Container, error) {
	cs := job.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		return nil, fmt.Errorf("deploy: Job %s has %d containers, want 1", job.Name, len(cs))
	}
	return &cs[0], nil
}

// shardArg finds the container's one --shard argument, which must be
// --shard=$(JOB_COMPLETION_INDEX)/K, and returns its place in command+args and K.
func shardArg(c *corev1.Container) (int, int, error) {
	at, k := -1, 0
	for i, a := range append(append([]string(nil), c.Command...), c.Args...) {
		if a != "--shard" && !strings.HasPrefix(a, "--shard=") {
			continue
		}
		if at >= 0 {
			return 0, 0, errors.New("more than one --shard argument")
		}
		n, err := strconv.Atoi(strings.TrimPrefix(a, shardPrefix))
		if !strings.HasPrefix(a, shardPrefix) || err != nil || n < 1 {
			return 0, 0, fmt.Errorf("argument %q; want %sN", a, shardPrefix)
		}
		at, k = i, n
	}
	if at < 0 {
		return 0, 0, fmt.Errorf("no %sN argument", shardPrefix)
	}
	return at, k, nil
}

// expand replaces $(VAR) by env's VAR, $$ by $, and leaves a reference to an undefined
// variable, or a $ before anything else, as it is: the kubelet's rules
// (k8s.io/kubernetes/third_party/forked/golang/expansion). It also returns the names of the
// undefined variables referred to.
func expand(s string, env map[string]string) (string, []string) {
	var b strings.Builder
	var undefined []string
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			j := strings.IndexByte(s[i+2:], ')')
			if j < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+j]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
				undefined = append(undefined, name)
			}
			i += 2 + j
		default:
			b.WriteByte('$')
		}
	}
	return b.String(), undefined
}
