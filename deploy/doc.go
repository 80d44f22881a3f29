// Package deploy checks hyperflat's Kubernetes manifests against the real API types: the
// Jobs in kubernetes/ decode strictly into k8s.io/api's batch/v1 Job, the Katib Experiment in
// katib/ into Katib's own v1beta1 Experiment (and its trial template into a Job), and
// IndexedJob and PodCommand render the Indexed Job for any number of shards and the command
// each of its pods runs.
//
// It is a module of its own so that the Kubernetes and Katib modules stay out of
// hyperflat's module graph: nothing in hyperflat imports them, and go.mod at the top stays
// as it is. .ci/run tests it (cd deploy && go test ./...).
package deploy
