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
	config  corev1.ConfigMap
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
		t.Fatalf("%d documents, want 4 (ConfigMap, PVC, 2 Jobs)", len(docs))
	}
	var o objects
	targets := []any{&o.config, &o.claim, &o.runners, &o.merge}
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
	if o.config.Kind != "ConfigMap" || o.config.Data[ScenarioFile] != "scenarios: {}\n" {
		t.Errorf("ConfigMap %s data %q", o.config.Kind, o.config.Data)
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
