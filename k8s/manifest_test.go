package k8s

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// unmarshalStrict decodes one YAML document as the API server does: field
// names case-sensitive, unknown and duplicate fields refused.
func unmarshalStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return fmt.Errorf("strict decoding: %v", strict)
	}
	return nil
}

// objects are the manifests decoded into Kubernetes' own API types.
type objects struct {
	secret  corev1.Secret
	service corev1.Service
	coord   batchv1.Job
	runners batchv1.Job
}

// decodeStrict decodes the YAML stream into Kubernetes' API types,
// refusing any field those types do not have.
func decodeStrict(t *testing.T, stream []byte) objects {
	t.Helper()
	docs := bytes.Split(stream, []byte("\n---\n"))
	if len(docs) != 4 {
		t.Fatalf("%d documents, want 4 (Secret, Service, 2 Jobs)", len(docs))
	}
	var o objects
	targets := []any{&o.secret, &o.service, &o.coord, &o.runners}
	for i, d := range docs {
		if err := unmarshalStrict(append(d, '\n'), targets[i]); err != nil {
			t.Fatalf("document %d does not decode strictly: %v\n%s", i+1, err, d)
		}
	}
	return o
}

func testOptions() Options {
	return Options{Name: "checkout", ID: "x7k2pq", Namespace: "load", Image: "registry.example/knee:v1", Runners: 4,
		Scenario: []byte("scenarios: {}\n"), Token: "tok",
		ReadyTimeout: 10 * time.Minute, PartsTimeout: 20 * time.Minute, Linger: time.Hour, TTLAfterFinished: time.Hour,
		Runner: Resources{CPU: "2", Memory: "1Gi"}, Coordinator: Resources{CPU: "500m", Memory: "512Mi"},
		Spread: SpreadEven, NodeSelector: map[string]string{"pool": "load"},
		Tolerations:      []Toleration{{Key: "dedicated", Operator: "Equal", Value: "load", Effect: "NoSchedule"}},
		ImagePullSecrets: []string{"regcred"}, ServiceAccount: "knee", PriorityClass: "batch",
		Labels: map[string]string{"team": "shop"}, Annotations: map[string]string{"example.com/owner": "ops"},
		PrometheusRW: []string{"http://prometheus:9090/api/v1/write"}, Thresholds: []string{"p(99)<250ms"}}
}

// guaranteed is Kubernetes' rule for the Guaranteed QoS class: every
// container has CPU and memory limits, and requests equal to them.
func guaranteed(p corev1.PodSpec) bool {
	for _, c := range p.Containers {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, ok := c.Resources.Limits[r]
			q, okq := c.Resources.Requests[r]
			if !ok || !okq || l.Cmp(q) != 0 {
				return false
			}
		}
	}
	return true
}

func TestManifestsDecodeStrictly(t *testing.T) {
	out, err := Manifests(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	o := decodeStrict(t, out)
	if o.secret.Name != "checkout-x7k2pq-scenario" || o.secret.StringData[ScenarioFile] != "scenarios: {}\n" || o.secret.StringData[TokenKey] != "tok" {
		t.Errorf("Secret %s data %q", o.secret.Name, o.secret.StringData)
	}
	// The Service reaches the coordinator's pod, on the port it listens on.
	cp := o.coord.Spec.Template
	for k, v := range o.service.Spec.Selector {
		if cp.Labels[k] != v {
			t.Errorf("Service selects %s=%s; the coordinator pod has %q", k, v, cp.Labels[k])
		}
	}
	if o.service.Name != "checkout-x7k2pq-coord" || o.service.Spec.Ports[0].Port != 7070 || o.service.Spec.Ports[0].TargetPort.IntValue() != 7070 {
		t.Errorf("Service %s ports %+v", o.service.Name, o.service.Spec.Ports)
	}
	if margs := strings.Join(cp.Spec.Containers[0].Args, " "); margs != "coordinate --runners 4 --dir /results --listen :7070 --ready-timeout 10m0s --parts-timeout 20m0s --linger 1h0m0s --threshold p(99)<250ms" {
		t.Errorf("coordinator args %q", margs)
	}
	rs := o.runners.Spec
	if rs.CompletionMode == nil || *rs.CompletionMode != batchv1.IndexedCompletion || *rs.Completions != 4 || *rs.Parallelism != 4 {
		t.Errorf("runners: completionMode %v, completions %v, parallelism %v", rs.CompletionMode, rs.Completions, rs.Parallelism)
	}
	c := rs.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--execution-segment-sequence 0,1/4,1/2,3/4,1", "--execution-segment-index $(JOB_COMPLETION_INDEX)",
		"--coordinator http://checkout-x7k2pq-coord:7070", "--test-id checkout-x7k2pq", "--out /results",
		"--out=prometheus-rw=http://prometheus:9090/api/v1/write"} {
		if !strings.Contains(args, want) {
			t.Errorf("runner args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--start-at") {
		t.Errorf("runner args %q still carry a clock instant", args)
	}
	if c.Env[0].Name != "JOB_COMPLETION_INDEX" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("runner env %+v", c.Env)
	}
	for _, p := range []corev1.PodTemplateSpec{rs.Template, cp} {
		s := p.Spec
		e := s.Containers[0].Env[len(s.Containers[0].Env)-1]
		if e.Name != "KNEE_COORDINATOR_TOKEN" || e.ValueFrom.SecretKeyRef.Name != o.secret.Name || e.ValueFrom.SecretKeyRef.Key != TokenKey {
			t.Errorf("%s: token env %+v", s.Containers[0].Name, e)
		}
		if !guaranteed(s) {
			t.Errorf("%s: resources %+v are not Guaranteed QoS", s.Containers[0].Name, s.Containers[0].Resources)
		}
		if s.NodeSelector["pool"] != "load" || s.Tolerations[0].Key != "dedicated" || s.Tolerations[0].Effect != corev1.TaintEffectNoSchedule ||
			s.ImagePullSecrets[0].Name != "regcred" || s.ServiceAccountName != "knee" || s.PriorityClassName != "batch" ||
			p.Labels["team"] != "shop" || p.Annotations["example.com/owner"] != "ops" {
			t.Errorf("%s: scheduling fields %+v, labels %v, annotations %v", s.Containers[0].Name, s, p.Labels, p.Annotations)
		}
		if s.RestartPolicy != corev1.RestartPolicyNever || !*s.SecurityContext.RunAsNonRoot || !*s.Containers[0].SecurityContext.ReadOnlyRootFilesystem || *s.AutomountServiceAccountToken {
			t.Errorf("%s: pod security %+v", s.Containers[0].Name, s)
		}
	}
	if q := rs.Template.Spec.Containers[0].Resources.Limits.Cpu().String(); q != "2" {
		t.Errorf("runner CPU limit %s, want 2", q)
	}
	ts := rs.Template.Spec.TopologySpreadConstraints
	if len(ts) != 1 || ts[0].MaxSkew != 1 || ts[0].TopologyKey != "kubernetes.io/hostname" || ts[0].WhenUnsatisfiable != corev1.DoNotSchedule ||
		ts[0].LabelSelector.MatchLabels["knee/role"] != "runner" || rs.Template.Labels["knee/role"] != "runner" {
		t.Errorf("spread %+v", ts)
	}
	// 10 min ready + 20 min parts + 5 min slack = 2100 s; the coordinator also lingers 1 h: 5700 s.
	if *rs.ActiveDeadlineSeconds != 2100 || *o.coord.Spec.ActiveDeadlineSeconds != 5700 || *rs.TTLSecondsAfterFinished != 3600 {
		t.Errorf("deadlines %d, %d; ttl %d", *rs.ActiveDeadlineSeconds, *o.coord.Spec.ActiveDeadlineSeconds, *rs.TTLSecondsAfterFinished)
	}
	if o.runners.Namespace != "load" || o.service.Namespace != "load" {
		t.Errorf("namespaces %q, %q", o.runners.Namespace, o.service.Namespace)
	}
}

func TestSpreadOnePerNode(t *testing.T) {
	o := testOptions()
	o.Spread = SpreadOnePerNode
	out, err := Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	s := decodeStrict(t, out).runners.Spec.Template.Spec
	req := s.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(s.TopologySpreadConstraints) != 0 || len(req) != 1 || req[0].TopologyKey != "kubernetes.io/hostname" || req[0].LabelSelector.MatchLabels["knee/test"] != "checkout-x7k2pq" {
		t.Errorf("anti-affinity %+v", s.Affinity)
	}
}

// TestNamesUniquePerTest: two tests written from the same flags share no
// object name, so the second never collides with the first's objects.
func TestNamesUniquePerTest(t *testing.T) {
	names := map[string]bool{}
	for range 2 {
		o := testOptions()
		o.ID = NewID()
		out, err := Manifests(o)
		if err != nil {
			t.Fatal(err)
		}
		d := decodeStrict(t, out)
		// Names are unique per kind: the coordinator's Job and Service share one.
		for _, n := range []string{"Secret/" + d.secret.Name, "Service/" + d.service.Name, "Job/" + d.coord.Name, "Job/" + d.runners.Name} {
			if names[n] {
				t.Errorf("name %s used by both tests", n)
			}
			names[n] = true
		}
	}
}

// TestReadTest reads back what fetch needs from the manifests.
func TestReadTest(t *testing.T) {
	out, err := Manifests(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadTest(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Test{Namespace: "load", Service: "checkout-x7k2pq-coord", Port: 7070, Token: "tok"}); got != want {
		t.Errorf("ReadTest: %+v, want %+v", got, want)
	}
	if _, err := ReadTest([]byte("apiVersion: v1\nkind: ConfigMap\n")); err == nil {
		t.Error("read a test from a stray ConfigMap")
	}
}

// TestStrictDecodingRefusesUnknownFields shows the check above can fail:
// a misspelt field is refused.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	for _, bad := range []string{
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completionmode: Indexed\n",          // wrong case
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completions: 2\n  parallelsim: 2\n", // misspelt
	} {
		var j batchv1.Job
		if err := unmarshalStrict([]byte(bad), &j); err == nil {
			t.Errorf("decoded %q", bad)
		}
	}
}

func TestOptionsCheck(t *testing.T) {
	o := testOptions()
	o.Name, o.Runners, o.Image, o.Runner.CPU, o.Spread = "Bad_Name", 0, "", "two", "random"
	o.Tolerations = []Toleration{{Key: "k", Effect: "Sometimes"}}
	err := o.Check()
	if err == nil {
		t.Fatal("bad options accepted")
	}
	for _, want := range []string{"--name", "--runners", "--image", "--cpu", "--spread", "effect \"Sometimes\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestParseToleration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Toleration
		bad  bool
	}{
		{in: "dedicated=load:NoSchedule", want: Toleration{Key: "dedicated", Operator: "Equal", Value: "load", Effect: "NoSchedule"}},
		{in: "spot:NoExecute", want: Toleration{Key: "spot", Operator: "Exists", Effect: "NoExecute"}},
		{in: "nocolon", bad: true},
		{in: "k=v:Later", bad: true},
	} {
		got, err := ParseToleration(c.in)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("ParseToleration(%q) = %+v, %v", c.in, got, err)
		}
	}
}

// A run arg or Prometheus URL that carries a credential is kept in the
// Secret and reaches the runners through an environment variable from it:
// the Jobs' args and env never inline it; the scenario, whatever it holds,
// is in the Secret too.
func TestSecretsInTheSecret(t *testing.T) {
	o := testOptions()
	o.Scenario = []byte("scenarios: {a: {requests: [{url: 'http://u:scen-s3cret@h/', headers: {Authorization: 'Bearer hdr-s3cret'}}]}}\n")
	o.PrometheusRW = []string{"http://prom:rw-s3cret@prom/api/v1/write"}
	o.RunArgs = []string{"--interval=1s", "--header=Authorization: Bearer arg-s3cret"}
	o.Token = "tok-s3cret"
	out, err := Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeStrict(t, out)
	// Extra args, in order: the Prometheus output (0), then RunArgs (1, 2).
	if m.secret.StringData["run-arg-0"] != "--out=prometheus-rw="+o.PrometheusRW[0] || m.secret.StringData["run-arg-2"] != o.RunArgs[1] ||
		m.secret.StringData[ScenarioFile] != string(o.Scenario) {
		t.Fatalf("Secret data %q; want the scenario and extra args 0 and 2", m.secret.StringData)
	}
	if _, ok := m.secret.StringData["run-arg-1"]; ok {
		t.Errorf("extra arg 1 (--interval=1s) holds no secret, yet it is in the Secret")
	}
	c := m.runners.Spec.Template.Spec.Containers[0]
	if args := strings.Join(c.Args, " "); !strings.Contains(args, "$(KNEE_RUN_ARG_0) --interval=1s $(KNEE_RUN_ARG_2)") {
		t.Errorf("runner args %q; want --interval=1s as is and $(KNEE_RUN_ARG_i) for the secret ones", args)
	}
	for _, i := range []string{"0", "2"} {
		var ref *corev1.SecretKeySelector
		for _, e := range c.Env {
			if e.Name == "KNEE_RUN_ARG_"+i && e.ValueFrom != nil {
				ref = e.ValueFrom.SecretKeyRef
			}
		}
		if ref == nil || ref.Name != m.secret.Name || ref.Key != "run-arg-"+i {
			t.Errorf("KNEE_RUN_ARG_%s comes from %+v; want Secret %s key run-arg-%s", i, ref, m.secret.Name, i)
		}
	}
	// Only the Secret's document holds a secret, the token included.
	docs := bytes.Split(out, []byte("\n---\n"))
	for i, d := range docs[1:] {
		for _, s := range []string{"scen-s3cret", "hdr-s3cret", "rw-s3cret", "arg-s3cret", o.Token} {
			if bytes.Contains(d, []byte(s)) {
				t.Errorf("document %d inlines %q", i+2, s)
			}
		}
	}
}
