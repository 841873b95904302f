// Package k8s writes the Kubernetes manifests of a test split among N
// runners: the scenario in a Secret (a scenario's URLs and headers carry
// credentials; the pods mount it, so none is inlined elsewhere), an Indexed Job whose pod i runs
// segment i of the test (from JOB_COMPLETION_INDEX) starting at a shared
// wall-clock instant, a volume for the run directories, and a Job that
// merges them once every part has finished.
//
// The manifests are plain structs marshalled to YAML, with Kubernetes' field
// names; the tests decode them strictly into Kubernetes' own API types, so
// knee does not link the Kubernetes libraries.
package k8s

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/knee-dev/knee/load/schedule"
	"github.com/knee-dev/knee/redact"
)

// Paths inside the pods.
const (
	ScenarioDir  = "/scenario"
	ScenarioFile = "scenario.yaml"
	ResultsDir   = "/results"
	MergedDir    = ResultsDir + "/merged"
)

// Options describe the test.
type Options struct {
	Name         string // prefix of every object's name; a DNS label
	Namespace    string // "" leaves it to kubectl's context
	Image        string // the knee image
	Runners      int
	Scenario     []byte        // the scenario file's content
	StartAt      time.Time     // the shared start; every runner's schedule begins then
	Wait         time.Duration // how long the merge waits for the parts
	Storage      string        // size of the results volume, e.g. 1Gi
	StorageClass string        // "" for the cluster's default; it must offer ReadWriteMany
	RunArgs      []string      // more knee run flags, e.g. --interval 1s
	Thresholds   []string      // evaluated on the merge
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$`)

// Check reports what is wrong with o, each with how to fix it.
func (o Options) Check() error {
	var errs []error
	if !dnsLabel.MatchString(o.Name) {
		errs = append(errs, fmt.Errorf("--name %q: use lower-case letters, digits and '-', at most 42 characters", o.Name))
	}
	if o.Runners < 1 || o.Runners > 1000 {
		errs = append(errs, fmt.Errorf("--runners %d: use 1 to 1000", o.Runners))
	}
	if o.Image == "" {
		errs = append(errs, errors.New("--image: give the knee image, e.g. registry.example/knee:v1"))
	}
	if len(o.Scenario) == 0 {
		errs = append(errs, errors.New("give the scenario file the runners share"))
	}
	if o.StartAt.IsZero() {
		errs = append(errs, errors.New("no start time"))
	}
	return errors.Join(errs...)
}

// Sequence is the runners' segments: N equal parts.
func (o Options) Sequence() (string, error) {
	seq, err := schedule.EvenSequence(o.Runners)
	if err != nil {
		return "", err
	}
	return seq.String(), nil
}

// SecretName is the Secret holding the scenario and the secret run args.
func (o Options) SecretName() string { return o.Name + "-scenario" }

// secretArgs are the RunArgs that carry a secret (a credential header, a
// URL's userinfo, a --redact-query value), by index: the Secret holds them
// under runArgKey(i) and the runner's args refer to them through an
// environment variable, runArgEnv(i).
func (o Options) secretArgs() map[int]bool {
	red := redact.FromArgs(o.RunArgs)
	out := map[int]bool{}
	for i, a := range o.RunArgs {
		if red.Text(a) != a {
			out[i] = true
		}
	}
	return out
}

func runArgKey(i int) string { return fmt.Sprintf("run-arg-%d", i) }
func runArgEnv(i int) string { return fmt.Sprintf("KNEE_RUN_ARG_%d", i) }

// RunnerArgs are the arguments of every runner pod's knee, with
// Kubernetes' $(VAR) references to the pod's environment: a run arg that
// carries a secret is $(KNEE_RUN_ARG_i), from the Secret.
func (o Options) RunnerArgs() ([]string, error) {
	seq, err := o.Sequence()
	if err != nil {
		return nil, err
	}
	args := []string{"run", ScenarioDir + "/" + ScenarioFile,
		"--execution-segment-sequence", seq,
		"--execution-segment-index", "$(JOB_COMPLETION_INDEX)",
		"--start-at", o.StartAt.UTC().Format(time.RFC3339Nano),
		"--test-id", o.Name + "-" + o.StartAt.UTC().Format("20060102T150405Z"),
		"--runner-name", "$(POD_NAME)",
		"--out", ResultsDir + "/part-$(JOB_COMPLETION_INDEX)",
		"--quiet"}
	secret := o.secretArgs()
	for i, a := range o.RunArgs {
		if secret[i] {
			a = "$(" + runArgEnv(i) + ")"
		}
		args = append(args, a)
	}
	return args, nil
}

// MergeArgs are the merge pod's knee arguments.
func (o Options) MergeArgs() []string {
	args := []string{"merge", ResultsDir, "--out", MergedDir,
		"--wait-parts", strconv.Itoa(o.Runners), "--wait-timeout", o.Wait.String()}
	for _, t := range o.Thresholds {
		args = append(args, "--threshold", t)
	}
	return args
}

// Manifests returns the objects as one YAML stream: Secret,
// PersistentVolumeClaim, the runners' Indexed Job and the merge Job.
func Manifests(o Options) ([]byte, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	runArgs, err := o.RunnerArgs()
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app.kubernetes.io/name": "knee", "knee/test": o.Name}
	meta := func(suffix string) objectMeta {
		return objectMeta{Name: o.Name + suffix, Namespace: o.Namespace, Labels: labels}
	}
	storage := o.Storage
	if storage == "" {
		storage = "1Gi"
	}
	var class *string
	if o.StorageClass != "" {
		class = &o.StorageClass
	}
	volumes := []volume{
		{Name: "scenario", Secret: &secretVolume{SecretName: o.SecretName(), Items: []keyToPath{{Key: ScenarioFile, Path: ScenarioFile}}}},
		{Name: "results", PersistentVolumeClaim: &pvcVolume{ClaimName: o.Name + "-results"}},
	}
	mounts := []volumeMount{
		{Name: "scenario", MountPath: ScenarioDir, ReadOnly: true},
		{Name: "results", MountPath: ResultsDir},
	}
	uid := int64(65532) // the image's non-root user; fsGroup lets it write the volume
	security := &podSecurityContext{RunAsNonRoot: true, RunAsUser: uid, RunAsGroup: uid, FSGroup: uid}
	runners := int32(o.Runners)
	zero := int32(0)
	data := map[string]string{ScenarioFile: string(o.Scenario)}
	env := []envVar{
		{Name: "JOB_COMPLETION_INDEX", ValueFrom: &envSource{FieldRef: &fieldRef{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
		{Name: "POD_NAME", ValueFrom: &envSource{FieldRef: &fieldRef{FieldPath: "metadata.name"}}},
	}
	secret := o.secretArgs()
	for i, a := range o.RunArgs {
		if secret[i] {
			data[runArgKey(i)] = a
			env = append(env, envVar{Name: runArgEnv(i), ValueFrom: &envSource{SecretKeyRef: &secretKeyRef{Name: o.SecretName(), Key: runArgKey(i)}}})
		}
	}
	objs := []any{
		secretObject{APIVersion: "v1", Kind: "Secret", Metadata: meta("-scenario"), Type: "Opaque", StringData: data},
		pvc{APIVersion: "v1", Kind: "PersistentVolumeClaim", Metadata: meta("-results"), Spec: pvcSpec{
			AccessModes:      []string{"ReadWriteMany"},
			StorageClassName: class,
			Resources:        resources{Requests: map[string]string{"storage": storage}},
		}},
		job{APIVersion: "batch/v1", Kind: "Job", Metadata: meta("-runners"), Spec: jobSpec{
			CompletionMode: "Indexed", Completions: &runners, Parallelism: &runners, BackoffLimit: &zero,
			Template: podTemplate{Metadata: objectMeta{Labels: labels}, Spec: podSpec{
				RestartPolicy: "Never", SecurityContext: security, Volumes: volumes,
				Containers: []container{{
					Name: "knee", Image: o.Image, Args: runArgs, VolumeMounts: mounts, Env: env,
				}},
			}},
		}},
		job{APIVersion: "batch/v1", Kind: "Job", Metadata: meta("-merge"), Spec: jobSpec{
			BackoffLimit: &zero,
			Template: podTemplate{Metadata: objectMeta{Labels: labels}, Spec: podSpec{
				RestartPolicy: "Never", SecurityContext: security, Volumes: volumes,
				Containers: []container{{Name: "merge", Image: o.Image, Args: o.MergeArgs(), VolumeMounts: mounts}},
			}},
		}},
	}
	var buf bytes.Buffer
	for i, obj := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(obj); err != nil {
			return nil, err
		}
		enc.Close()
	}
	return buf.Bytes(), nil
}

// The few Kubernetes API fields the manifests use, with its JSON names.

type objectMeta struct {
	Name      string            `yaml:"name,omitempty"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type secretObject struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   objectMeta        `yaml:"metadata"`
	Type       string            `yaml:"type"`
	StringData map[string]string `yaml:"stringData"`
}

type pvc struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       pvcSpec    `yaml:"spec"`
}

type pvcSpec struct {
	AccessModes      []string  `yaml:"accessModes"`
	StorageClassName *string   `yaml:"storageClassName,omitempty"`
	Resources        resources `yaml:"resources"`
}

type resources struct {
	Requests map[string]string `yaml:"requests"`
}

type job struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       jobSpec    `yaml:"spec"`
}

type jobSpec struct {
	CompletionMode string      `yaml:"completionMode,omitempty"`
	Completions    *int32      `yaml:"completions,omitempty"`
	Parallelism    *int32      `yaml:"parallelism,omitempty"`
	BackoffLimit   *int32      `yaml:"backoffLimit,omitempty"`
	Template       podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata objectMeta `yaml:"metadata"`
	Spec     podSpec    `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy   string              `yaml:"restartPolicy"`
	SecurityContext *podSecurityContext `yaml:"securityContext,omitempty"`
	Containers      []container         `yaml:"containers"`
	Volumes         []volume            `yaml:"volumes"`
}

type podSecurityContext struct {
	RunAsNonRoot bool  `yaml:"runAsNonRoot"`
	RunAsUser    int64 `yaml:"runAsUser"`
	RunAsGroup   int64 `yaml:"runAsGroup"`
	FSGroup      int64 `yaml:"fsGroup"`
}

type container struct {
	Name         string        `yaml:"name"`
	Image        string        `yaml:"image"`
	Args         []string      `yaml:"args"`
	Env          []envVar      `yaml:"env,omitempty"`
	VolumeMounts []volumeMount `yaml:"volumeMounts"`
}

type envVar struct {
	Name      string     `yaml:"name"`
	Value     string     `yaml:"value,omitempty"`
	ValueFrom *envSource `yaml:"valueFrom,omitempty"`
}

type envSource struct {
	FieldRef     *fieldRef     `yaml:"fieldRef,omitempty"`
	SecretKeyRef *secretKeyRef `yaml:"secretKeyRef,omitempty"`
}

type secretKeyRef struct {
	Name string `yaml:"name"`
	Key  string `yaml:"key"`
}

type fieldRef struct {
	FieldPath string `yaml:"fieldPath"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type volume struct {
	Name                  string        `yaml:"name"`
	Secret                *secretVolume `yaml:"secret,omitempty"`
	PersistentVolumeClaim *pvcVolume    `yaml:"persistentVolumeClaim,omitempty"`
}

type secretVolume struct {
	SecretName string      `yaml:"secretName"`
	Items      []keyToPath `yaml:"items,omitempty"`
}

type keyToPath struct {
	Key  string `yaml:"key"`
	Path string `yaml:"path"`
}

type pvcVolume struct {
	ClaimName string `yaml:"claimName"`
}
