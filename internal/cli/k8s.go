package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/coord"
	"github.com/knee-dev/knee/guard"
	"github.com/knee-dev/knee/internal/limits"
	"github.com/knee-dev/knee/k8s"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/scenario"
)

type k8sJobFlags struct {
	o            k8s.Options
	nodeSelector []string
	tolerations  []string
	labels       []string
	annotations  []string
	out          string
}

func (a *app) k8sCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "k8s",
		Short: "Run a test split among runners on Kubernetes",
		Example: `  knee k8s job scenario.yaml --runners 10 --image registry.example/knee:v1 --name checkout --out checkout-k8s.yaml
  kubectl apply -f checkout-k8s.yaml
  knee k8s fetch checkout-k8s.yaml --out results/checkout`,
	}
	c.AddCommand(a.k8sJobCommand(), a.k8sFetchCommand())
	return c
}

func (a *app) k8sJobCommand() *cobra.Command {
	var f k8sJobFlags
	c := &cobra.Command{
		Use:   "job scenario.yaml --runners N --image IMAGE",
		Short: "Write the manifests of a test split among N runner pods and its coordinator",
		Long: `knee k8s job writes Kubernetes manifests (YAML, for kubectl apply -f), named
NAME-ID with a random ID so a test written again never collides with the last:
a Secret with the scenario and the coordinator's token; the coordinator (knee
coordinate: a Job and its Service); and an Indexed Job of N runner pods, pod i
running segment i of 0,1/N,...,1 (from JOB_COMPLETION_INDEX).

The runners start paused: each reports ready to the coordinator, which
releases them all at one instant once all N are ready (no clock is trusted),
or fails the test after --ready-timeout naming the pods never ready. Each
runner sends its run directory to the coordinator when it finishes; the
coordinator merges them, prints the summary and thresholds to its log and
serves the merged run directory to knee k8s fetch. No shared volume is used.

Pods are Guaranteed (requests = limits, --cpu, --memory), spread over nodes
(--spread), run as a non-root user on a read-only root file system, and
carry no Kubernetes API token. The Secret also holds any --run-arg or
--prometheus-rw URL that carries a credential (the pods take it as
$(KNEE_RUN_ARG_i)); the manifests are written as they are, credentials
included (only in the Secret): keep the file as you keep the scenario.`,
		Example: `  knee k8s job scenario.yaml --runners 10 --image registry.example/knee:v1 --name checkout --out checkout-k8s.yaml
  kubectl apply -f checkout-k8s.yaml
  knee k8s fetch checkout-k8s.yaml --out results/checkout
  knee report results/checkout`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return a.doK8sJob(args[0], f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.o.Name, "name", "knee", "prefix of the objects' names (a DNS label of at most 30 characters); a random suffix is added")
	fl.StringVar(&f.o.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	fl.StringVar(&f.o.Image, "image", "", "the knee image (see the Dockerfile)")
	fl.StringVar(&f.o.ImagePullPolicy, "image-pull-policy", "", "Always, IfNotPresent or Never (default: the cluster's)")
	fl.StringArrayVar(&f.o.ImagePullSecrets, "image-pull-secret", nil, "a Secret to pull the image with (repeatable)")
	fl.IntVar(&f.o.Runners, "runners", 1, "how many runner pods share the test")
	fl.StringVar(&f.o.Runner.CPU, "cpu", "1", "each runner's CPU, requested and limited alike (Guaranteed QoS); '' for none")
	fl.StringVar(&f.o.Runner.Memory, "memory", "1Gi", "each runner's memory, requested and limited alike; '' for none")
	fl.StringVar(&f.o.Coordinator.CPU, "coordinator-cpu", "500m", "the coordinator's CPU, requested and limited alike")
	fl.StringVar(&f.o.Coordinator.Memory, "coordinator-memory", "512Mi", "the coordinator's memory, requested and limited alike")
	fl.StringVar(&f.o.Spread, "spread", k8s.SpreadEven, "where runners land: even (a topology spread over nodes), one-per-node (required anti-affinity) or none")
	fl.StringArrayVar(&f.nodeSelector, "node-selector", nil, "schedule the pods on nodes with this label, key=value (repeatable)")
	fl.StringArrayVar(&f.tolerations, "toleration", nil, "tolerate a taint, key=value:effect or key:effect (repeatable)")
	fl.StringVar(&f.o.ServiceAccount, "service-account", "", "the pods' service account (default: the namespace's)")
	fl.StringVar(&f.o.PriorityClass, "priority-class", "", "the pods' priority class")
	fl.StringArrayVar(&f.labels, "label", nil, "a label of every pod, key=value (repeatable)")
	fl.StringArrayVar(&f.annotations, "annotation", nil, "an annotation of every pod, key=value (repeatable)")
	fl.DurationVar(&f.o.ReadyTimeout, "ready-timeout", 10*time.Minute, "fail the test when not every runner is ready this long after the coordinator starts")
	fl.DurationVar(&f.o.Linger, "linger", time.Hour, "how long the coordinator serves the merged result unless fetched first")
	fl.DurationVar(&f.o.ActiveDeadline, "active-deadline", 0, "the Jobs' activeDeadlineSeconds (default: derived from the test's length and the timeouts)")
	fl.DurationVar(&f.o.TTLAfterFinished, "ttl-after-finished", time.Hour, "delete the Jobs this long after they finish (ttlSecondsAfterFinished); 0 keeps them")
	fl.IntVar(&f.o.Port, "port", k8s.DefaultPort, "the coordinator's port")
	fl.StringArrayVar(&f.o.PrometheusRW, "prometheus-rw", nil, "every runner pushes its intervals to this Prometheus remote-write URL (knee run --out prometheus-rw=URL; repeatable)")
	fl.StringArrayVar(&f.o.RunArgs, "run-arg", nil, "an extra knee run flag for every runner, e.g. --run-arg=--interval=1s (repeatable)")
	fl.StringArrayVar(&f.o.Thresholds, "threshold", nil, "pass/fail criterion evaluated on the merge, e.g. 'p(99)<250ms'")
	fl.StringVar(&f.out, "out", "", "write the manifests to this file (default: standard output); knee k8s fetch reads it back")
	return c
}

// keyValues reads key=value flags.
func keyValues(flag string, list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, s := range list {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s %q: want key=value", flag, s)
		}
		m[k] = v
	}
	return m, nil
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
	if f.o.NodeSelector, err = keyValues("node-selector", f.nodeSelector); err != nil {
		return usageErr(err)
	}
	if f.o.Labels, err = keyValues("label", f.labels); err != nil {
		return usageErr(err)
	}
	if f.o.Annotations, err = keyValues("annotation", f.annotations); err != nil {
		return usageErr(err)
	}
	for _, s := range f.tolerations {
		t, err := k8s.ParseToleration(s)
		if err != nil {
			return usageErr(err)
		}
		f.o.Tolerations = append(f.o.Tolerations, t)
	}
	// The coordinator waits for the parts as long as the test runs and
	// stops, and more (the upload, a slow node).
	var span, grace time.Duration
	for _, sc := range cfg.Scenarios {
		span = max(span, sc.StartTime+sc.Executor.Span())
		grace = max(grace, sc.GracefulStop)
	}
	f.o.PartsTimeout = span + grace + 10*time.Minute
	f.o.ID = k8s.NewID()
	if f.o.Token, err = guard.NewToken(); err != nil {
		return err
	}
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
	// 0600: the file holds the coordinator's token.
	if err := rundir.WriteFileAtomic(f.out, out, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(a.env.Stderr, "wrote %s: test %s, %d runners and a coordinator\nnext: kubectl apply -f %s && knee k8s fetch %s --out results/%s\n",
		f.out, f.o.TestName(), f.o.Runners, f.out, f.out, f.o.TestName())
	return nil
}

type k8sFetchFlags struct {
	url     string
	out     string
	kubectl string
	timeout time.Duration
}

func (a *app) k8sFetchCommand() *cobra.Command {
	var f k8sFetchFlags
	c := &cobra.Command{
		Use:   "fetch MANIFESTS --out DIR",
		Short: "Wait for a test on Kubernetes to end and bring its merged run directory here",
		Long: `knee k8s fetch reads the manifests knee k8s job wrote (the coordinator's Service
and token), reaches the coordinator through kubectl port-forward (or --url),
waits while the test runs, and downloads the merged run directory into DIR,
checked against its SHA-256. It prints the summary and exits as the
coordinator did: 0 passed, 1 the test did not start or a part is missing
(DIR then holds the merge of the others, marked PARTIAL), 99 a threshold
failed. Then knee report, analyze and compare read DIR like any run.`,
		Example: `  knee k8s fetch checkout-k8s.yaml --out results/checkout
  knee k8s fetch checkout-k8s.yaml --url http://127.0.0.1:7070 --out results/checkout`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return a.doK8sFetch(args[0], f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.out, "out", "", "the directory to write the merged run directory to (must not exist)")
	fl.StringVar(&f.url, "url", "", "the coordinator's URL, when you forward its port yourself")
	fl.StringVar(&f.kubectl, "kubectl", "kubectl", "the kubectl to port-forward with (its current context)")
	fl.DurationVar(&f.timeout, "timeout", 24*time.Hour, "give up after this long")
	return c
}

func (a *app) doK8sFetch(file string, f k8sFetchFlags) error {
	if f.out == "" {
		return usagef("k8s fetch: give the directory to write with --out DIR")
	}
	if _, err := os.Stat(f.out); err == nil {
		return usagef("k8s fetch: --out %s exists; choose a new directory", f.out)
	}
	// The manifests hold a scenario (limits.Scenario) and a few objects.
	data, err := limits.ReadFile(file, 2*limits.Scenario, "manifests", "give the file knee k8s job wrote (--out)")
	if err != nil {
		return usageErr(err)
	}
	t, err := k8s.ReadTest(data)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", file, err))
	}
	if tok := a.env.Getenv(coord.TokenEnv); tok != "" {
		t.Token = tok
	}
	if f.url == "" {
		// Missing, it would never appear: say so now, not after --timeout.
		if _, err := exec.LookPath(f.kubectl); err != nil {
			return &ExitError{Code: ExitFailure, Err: fmt.Errorf("--kubectl %s: %w (fix: install kubectl, or give --url with your own port-forward)", f.kubectl, err)}
		}
	}
	ctx, cancel := context.WithTimeout(a.ctx, f.timeout)
	defer cancel()
	var exit int
	var msg string
	for {
		url, pfDone := f.url, (<-chan struct{})(nil)
		pfCtx, stop := context.WithCancel(ctx)
		if url == "" {
			if url, pfDone, err = k8s.PortForward(pfCtx, f.kubectl, t); err != nil {
				stop()
				if ctx.Err() != nil {
					return &ExitError{Code: ExitFailure, Err: err}
				}
				fmt.Fprintf(a.env.Stderr, "knee: %v; trying again in 5s\n", err)
				select {
				case <-ctx.Done():
				case <-time.After(5 * time.Second):
				}
				continue
			}
			fmt.Fprintf(a.env.Stderr, "knee: forwarding %s to service/%s\n", url, t.Service)
		}
		fctx, fcancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-pfDone: // kubectl went: its port is dead
				fcancel()
			case <-fctx.Done():
			}
		}()
		exit, msg, err = coord.Fetch(fctx, url, t.Token, f.out, nil, a.env.Stderr)
		pfGone := false
		select {
		case <-pfDone:
			pfGone = true
		default:
		}
		fcancel()
		stop()
		if pfDone != nil {
			<-pfDone // kubectl is gone before the next one, or the return
		}
		if err != nil && pfGone && ctx.Err() == nil {
			continue // kubectl exited while we waited: forward again
		}
		break
	}
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	fmt.Fprintf(a.env.Stdout, "fetched the merged run directory: %s\n", f.out)
	if run, rerr := rundir.Open(f.out); rerr == nil {
		report.Summary(a.tables(), run.Meta.Summary)
	}
	fmt.Fprintf(a.env.Stdout, "coordinator: %s\n", msg)
	if exit != ExitOK {
		return &ExitError{Code: exit, Err: errors.New(msg)}
	}
	return nil
}
