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
	claim   corev1.PersistentVolumeClaim
	runners batchv1.Job
	merge   batchv1.Job
}

// decodeStrict decodes the YAML stream into Kubernetes' API types,
// refusing any field those types do not have.
func decodeStrict(t *testing.T, stream []byte) objects {
	t.Helper()
	docs := bytes.Split(stream, []byte("\n---\n"))
	if len(docs) != 4 {
		t.Fatalf("%d documents, want 4 (Secret, PVC, 2 Jobs)", len(docs))
	}
	var o objects
	targets := []any{&o.secret, &o.claim, &o.runners, &o.merge}
	for i, d := range docs {
		if err := unmarshalStrict(append(d, '\n'), targets[i]); err != nil {
			t.Fatalf("document %d does not decode strictly: %v\n%s", i+1, err, d)
		}
	}
	return o
}

func testOptions() Options {
	return Options{Name: "checkout", Namespace: "load", Image: "registry.example/knee:v1", Runners: 4,
		Scenario: []byte("scenarios: {}\n"), StartAt: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC),
		Wait: 20 * time.Minute, Thresholds: []string{"p(99)<250ms"}}
}

func TestManifestsDecodeStrictly(t *testing.T) {
	out, err := Manifests(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	o := decodeStrict(t, out)
	if o.secret.Kind != "Secret" || o.secret.StringData[ScenarioFile] != "scenarios: {}\n" {
		t.Errorf("Secret %s data %q", o.secret.Kind, o.secret.StringData)
	}
	if o.claim.Spec.AccessModes[0] != corev1.ReadWriteMany || o.claim.Spec.Resources.Requests.Storage().String() != "1Gi" {
		t.Errorf("claim %+v", o.claim.Spec)
	}
	rs := o.runners.Spec
	if rs.CompletionMode == nil || *rs.CompletionMode != batchv1.IndexedCompletion || *rs.Completions != 4 || *rs.Parallelism != 4 {
		t.Errorf("runners: completionMode %v, completions %v, parallelism %v", rs.CompletionMode, rs.Completions, rs.Parallelism)
	}
	c := rs.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--execution-segment-sequence 0,1/4,1/2,3/4,1", "--execution-segment-index $(JOB_COMPLETION_INDEX)",
		"--start-at 2026-12-01T03:00:00Z", "--out /results/part-$(JOB_COMPLETION_INDEX)"} {
		if !strings.Contains(args, want) {
			t.Errorf("runner args %q lack %q", args, want)
		}
	}
	if c.Env[0].Name != "JOB_COMPLETION_INDEX" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("runner env %+v", c.Env)
	}
	if rs.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || o.runners.Namespace != "load" {
		t.Errorf("restart policy %q, namespace %q", rs.Template.Spec.RestartPolicy, o.runners.Namespace)
	}
	margs := strings.Join(o.merge.Spec.Template.Spec.Containers[0].Args, " ")
	if margs != "merge /results --out /results/merged --wait-parts 4 --wait-timeout 20m0s --threshold p(99)<250ms" {
		t.Errorf("merge args %q", margs)
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
	o.Name, o.Runners, o.Image = "Bad_Name", 0, ""
	err := o.Check()
	if err == nil {
		t.Fatal("bad options accepted")
	}
	for _, want := range []string{"--name", "--runners", "--image"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// A run arg that carries a credential is kept in the Secret and reaches the
// runners through an environment variable from it: the Job's args and env
// never inline it; the scenario, whatever it holds, is in the Secret too.
func TestSecretsInTheSecret(t *testing.T) {
	o := testOptions()
	o.Scenario = []byte("scenarios: {a: {requests: [{url: 'http://u:scen-s3cret@h/', headers: {Authorization: 'Bearer hdr-s3cret'}}]}}\n")
	o.RunArgs = []string{"--interval=1s", "--out=prometheus-rw=http://prom:rw-s3cret@prom/api/v1/write"}
	out, err := Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeStrict(t, out)
	if m.secret.StringData["run-arg-1"] != o.RunArgs[1] || m.secret.StringData[ScenarioFile] != string(o.Scenario) {
		t.Fatalf("Secret data %q; want the scenario and run arg 1", m.secret.StringData)
	}
	if _, ok := m.secret.StringData["run-arg-0"]; ok {
		t.Errorf("run arg 0 (--interval=1s) holds no secret, yet it is in the Secret")
	}
	c := m.runners.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	if !strings.Contains(args, "--interval=1s $(KNEE_RUN_ARG_1)") {
		t.Errorf("runner args %q; want --interval=1s as is and $(KNEE_RUN_ARG_1) for the secret one", args)
	}
	var ref *corev1.SecretKeySelector
	for _, e := range c.Env {
		if e.Name == "KNEE_RUN_ARG_1" && e.ValueFrom != nil {
			ref = e.ValueFrom.SecretKeyRef
		}
	}
	if ref == nil || ref.Name != m.secret.Name || ref.Key != "run-arg-1" {
		t.Errorf("KNEE_RUN_ARG_1 comes from %+v; want Secret %s key run-arg-1", ref, m.secret.Name)
	}
	// Only the Secret's document holds a secret.
	docs := bytes.Split(out, []byte("\n---\n"))
	for i, d := range docs[1:] {
		for _, s := range []string{"scen-s3cret", "hdr-s3cret", "rw-s3cret"} {
			if bytes.Contains(d, []byte(s)) {
				t.Errorf("document %d inlines %q", i+2, s)
			}
		}
	}
}
