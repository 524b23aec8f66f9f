// Package jobs stands in for Kueue's pkg/controller/jobs when
// scripts/testenv-build builds Kueue for the test bed: Kueue's own file of
// that name links every job integration it ships (Kubeflow's trainers, Ray,
// JobSet, AppWrapper, LeaderWorkerSet, MPI, Spark, Deployments, StatefulSets,
// plain pods); the test bed exercises Kueue's core, the external-framework
// path through which the operator queues WeightedJobs, and batch/job, the one
// framework its configuration enables (scripts/testenv-kueue). The build
// copies Kueue's module and writes this file over that one, so those
// integrations and their API libraries are neither compiled nor linked.
package jobs

import (
	// batch/job: the framework scripts/testenv-kueue's configuration names.
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/job"
)
