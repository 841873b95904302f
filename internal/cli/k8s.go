package cli

import (
	"fmt"
	"github.com/knee-dev/knee/internal/limits"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/k8s"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/scenario"
)

type k8sJobFlags struct {
	o          k8s.Options
	startDelay time.Duration
	startAt    string
	out        string
}

func (a *app) k8sCommand() *cobra.Command {
	c := &cobra.Command{
		Use:     "k8s",
		Short:   "Run a test split among runners on Kubernetes",
		Example: `  knee k8s job scenario.yaml --runners 4 --image registry.example/knee:v1 --name checkout > test.yaml`,
	}
	c.AddCommand(a.k8sJobCommand())
	return c
}

func (a *app) k8sJobCommand() *cobra.Command {
	var f k8sJobFlags
	c := &cobra.Command{
		Use:   "job scenario.yaml --runners N --image IMAGE",
		Short: "Write the manifests of a test split among N runner pods, and of its merge",
		Long: `knee k8s job writes Kubernetes manifests (YAML, for kubectl apply -f): the
scenario in a Secret (with any --run-arg that carries a credential, which the
pods take from it as $(KNEE_RUN_ARG_i)); an Indexed Job of N pods, pod i running segment i of
0,1/N,...,1 (from JOB_COMPLETION_INDEX), all starting their schedules at one
wall-clock instant; a ReadWriteMany volume for the run directories; and a Job
that waits for the N parts and merges them into /results/merged.

The start instant is fixed when the manifests are written (now + --start-delay):
apply them soon after, and write them anew for every test. The manifests are
written as they are, credentials included (only in the Secret): keep the file
as you would keep the scenario.`,
		Example: `  knee k8s job scenario.yaml --runners 4 --image registry.example/knee:v1 --name checkout > test.yaml
  kubectl apply -f test.yaml
  kubectl wait --for=condition=complete job/checkout-merge --timeout=30m
  kubectl logs job/checkout-merge`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return a.doK8sJob(args[0], f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.o.Name, "name", "knee", "prefix of the objects' names (a DNS label)")
	fl.StringVar(&f.o.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	fl.StringVar(&f.o.Image, "image", "", "the knee image (see the Dockerfile)")
	fl.IntVar(&f.o.Runners, "runners", 1, "how many runner pods share the test")
	fl.DurationVar(&f.startDelay, "start-delay", 2*time.Minute, "start the test this long after the manifests are written, so every pod is up")
	fl.StringVar(&f.startAt, "start-at", "", "start the test at this instant instead (RFC 3339)")
	fl.StringVar(&f.o.Storage, "storage", "1Gi", "size of the results volume")
	fl.StringVar(&f.o.StorageClass, "storage-class", "", "storage class of the results volume; it must offer ReadWriteMany (default: the cluster's)")
	fl.StringArrayVar(&f.o.RunArgs, "run-arg", nil, "an extra knee run flag for every runner, e.g. --run-arg=--interval=1s (repeatable)")
	fl.StringArrayVar(&f.o.Thresholds, "threshold", nil, "pass/fail criterion evaluated on the merge, e.g. 'p(99)<250ms'")
	fl.StringVar(&f.out, "out", "", "write the manifests to this file (default: standard output)")
	return c
}

func (a *app) doK8sJob(file string, f k8sJobFlags) error {
	data, err := limits.ReadFile(file, limits.Scenario, "scenario file", "is this a scenario file? a scenario's YAML is a few KB")
	if err != nil {
		return usageErr(err)
	}
	cfg, err := scenario.Parse(file, data)
	if err != nil {
		return usageErr(err)
	}
	f.o.Scenario = data
	f.o.StartAt = time.Now().Add(f.startDelay).Truncate(time.Second)
	if f.startAt != "" {
		if f.o.StartAt, err = time.Parse(time.RFC3339Nano, f.startAt); err != nil {
			return usagef("--start-at %q: not an RFC 3339 time such as 2026-12-01T03:00:00Z", f.startAt)
		}
	}
	// The merge waits for the test to start, run and stop, and more.
	var span, grace time.Duration
	for _, sc := range cfg.Scenarios {
		span = max(span, sc.StartTime+sc.Executor.Span())
		grace = max(grace, sc.GracefulStop)
	}
	f.o.Wait = time.Until(f.o.StartAt).Round(time.Second) + span + grace + 10*time.Minute
	out, err := k8s.Manifests(f.o)
	if err != nil {
		return usageErr(err)
	}
	if f.out == "" {
		// Unscrubbed: the Secret must hold the real credentials, which only
		// it holds (runners would send REDACTED).
		_, err = a.rawStdout.Write(out)
		return err
	}
	if err := rundir.WriteFileAtomic(f.out, out, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(a.env.Stderr, "wrote %s: %d runners start at %s; kubectl apply -f %s\n", f.out, f.o.Runners, f.o.StartAt.UTC().Format(time.RFC3339), f.out)
	return nil
}
