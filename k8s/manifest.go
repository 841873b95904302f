// Package k8s writes the Kubernetes manifests of a test split among N
// runners, and finds its way back to the result: a Secret (the scenario,
// the coordinator's token and any run arg that carries a credential: a
// scenario's URLs and headers carry them, so no other object inlines
// them), the coordinator (knee coordinate: a Job and
// its Service), and an Indexed Job whose pod i runs segment i of the test
// (from JOB_COMPLETION_INDEX). The runners start together when the
// coordinator releases them, not at a clock instant, and send it their run
// directories; no shared volume is needed. knee k8s fetch reads the
// manifests back for the Service and the token (ReadTest) and brings the
// merged run directory to the user's machine through kubectl port-forward
// (PortForward).
//
// The manifests are plain structs marshalled to YAML, with Kubernetes' field
// names; the tests decode them strictly into Kubernetes' own API types, so
// knee does not link the Kubernetes libraries.
package k8s

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/knee-dev/knee/coord"
	"github.com/knee-dev/knee/load/schedule"
	"github.com/knee-dev/knee/redact"
)

// Paths inside the pods, and the coordinator's port.
const (
	ScenarioDir  = "/scenario"
	ScenarioFile = "scenario.yaml"
	ResultsDir   = "/results"
	TokenKey     = "token"
	DefaultPort  = 7070
)

// Resources are one container's CPU and memory: requests and limits both,
// so the pod is of Guaranteed QoS (a generator sharing a throttled CPU
// measures its own waits as the target's latency).
type Resources struct {
	CPU    string // e.g. "1", "500m"
	Memory string // e.g. "1Gi"
}

// Toleration is one toleration of the pods (Kubernetes' fields).
type Toleration struct {
	Key      string `yaml:"key,omitempty"`
	Operator string `yaml:"operator,omitempty"`
	Value    string `yaml:"value,omitempty"`
	Effect   string `yaml:"effect,omitempty"`
}

// Where the runners land, against each other.
const (
	SpreadEven       = "even"         // a topology spread over nodes, at most one runner more on any node
	SpreadOnePerNode = "one-per-node" // required pod anti-affinity: never two runners on a node
	SpreadNone       = "none"
)

// Options describe the test.
type Options struct {
	Name      string // prefix of every object's name; a DNS label
	ID        string // makes the names unique per test (NewID); objects are named Name-ID-...
	Namespace string // "" leaves it to kubectl's context
	Image     string // the knee image
	Runners   int
	Scenario  []byte // the scenario file's content
	Token     string // the coordinator's token, kept in the test's Secret
	Port      int    // the coordinator's; 0 means DefaultPort

	ReadyTimeout time.Duration // how long the coordinator waits for every runner to be ready
	PartsTimeout time.Duration // how long after the release it waits for the parts
	Linger       time.Duration // how long it serves the merged result unless fetched
	// ActiveDeadline bounds each Job's pods (activeDeadlineSeconds); 0
	// derives it from the timeouts above.
	ActiveDeadline   time.Duration
	TTLAfterFinished time.Duration // the Jobs are deleted this long after they finish; 0 keeps them

	Runner, Coordinator Resources
	Spread              string // SpreadEven, SpreadOnePerNode or SpreadNone
	NodeSelector        map[string]string
	Tolerations         []Toleration
	ImagePullSecrets    []string
	ImagePullPolicy     string // "" leaves it to the cluster
	ServiceAccount      string // "" is the namespace's default
	PriorityClass       string
	Labels, Annotations map[string]string // added to every pod

	RunArgs      []string // more knee run flags, e.g. --interval 1s
	PrometheusRW []string // every runner pushes its intervals there (--out prometheus-rw=URL)
	Thresholds   []string // evaluated on the merge
}

// The patterns are compiled at their first use, not at every start of knee
// (a run never needs them).
var (
	dnsLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,28}[a-z0-9])?$`) })
	idLabel  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]{1,12}$`) })
	quantity = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$`) })
	qualName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	})
	effects = []string{"", "NoSchedule", "PreferNoSchedule", "NoExecute"}
)

// NewID is a random suffix that makes a test's object names its own: a
// test written again does not collide with the last one's objects.
func NewID() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 6)
	rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b)
}

// TestName is the name of the test's objects: Name-ID.
func (o Options) TestName() string { return o.Name + "-" + o.ID }

// SecretName is the Secret holding the scenario and the token.
func (o Options) SecretName() string { return o.TestName() + "-scenario" }

// CoordinatorName is the coordinator's Job and Service.
func (o Options) CoordinatorName() string { return o.TestName() + "-coord" }

func (o Options) port() int {
	if o.Port == 0 {
		return DefaultPort
	}
	return o.Port
}

// Check reports what is wrong with o, each with how to fix it.
func (o Options) Check() error {
	var errs []error
	if !dnsLabel().MatchString(o.Name) {
		errs = append(errs, fmt.Errorf("--name %q: use lower-case letters, digits and '-', at most 30 characters", o.Name))
	}
	if !idLabel().MatchString(o.ID) {
		errs = append(errs, fmt.Errorf("test id %q: want 1 to 12 lower-case letters and digits", o.ID))
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
	if o.Token == "" {
		errs = append(errs, errors.New("no token for the coordinator"))
	}
	if o.ReadyTimeout <= 0 || o.PartsTimeout <= 0 || o.Linger <= 0 {
		errs = append(errs, errors.New("--ready-timeout, the parts' timeout and --linger must be positive"))
	}
	for _, r := range []struct {
		flag string
		v    string
	}{{"--cpu", o.Runner.CPU}, {"--memory", o.Runner.Memory}, {"--coordinator-cpu", o.Coordinator.CPU}, {"--coordinator-memory", o.Coordinator.Memory}} {
		if r.v != "" && !quantity().MatchString(r.v) {
			errs = append(errs, fmt.Errorf("%s %q: not a Kubernetes quantity such as 500m, 2, 512Mi, 1Gi", r.flag, r.v))
		}
	}
	if !slices.Contains([]string{SpreadEven, SpreadOnePerNode, SpreadNone}, o.Spread) {
		errs = append(errs, fmt.Errorf("--spread %q: use %s, %s or %s", o.Spread, SpreadEven, SpreadOnePerNode, SpreadNone))
	}
	if !slices.Contains([]string{"", "Always", "IfNotPresent", "Never"}, o.ImagePullPolicy) {
		errs = append(errs, fmt.Errorf("--image-pull-policy %q: use Always, IfNotPresent or Never", o.ImagePullPolicy))
	}
	for _, t := range o.Tolerations {
		if !slices.Contains(effects, t.Effect) {
			errs = append(errs, fmt.Errorf("--toleration %s: effect %q: use NoSchedule, PreferNoSchedule or NoExecute", t.Key, t.Effect))
		}
	}
	for _, m := range []map[string]string{o.NodeSelector, o.Labels, o.Annotations} {
		for k := range m {
			if !qualName().MatchString(k) {
				errs = append(errs, fmt.Errorf("key %q: not a Kubernetes label or annotation key such as example.com/team", k))
			}
		}
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

// CoordinatorURL is where the runners reach the coordinator: its Service,
// in their own namespace.
func (o Options) CoordinatorURL() string {
	return fmt.Sprintf("http://%s:%d", o.CoordinatorName(), o.port())
}

// RunnerArgs are the arguments of every runner pod's knee, with
// Kubernetes' $(VAR) references to the pod's environment.
func (o Options) RunnerArgs() ([]string, error) {
	seq, err := o.Sequence()
	if err != nil {
		return nil, err
	}
	args := []string{"run", ScenarioDir + "/" + ScenarioFile,
		"--execution-segment-sequence", seq,
		"--execution-segment-index", "$(JOB_COMPLETION_INDEX)",
		"--coordinator", o.CoordinatorURL(),
		"--test-id", o.TestName(),
		"--runner-name", "$(POD_NAME)",
		"--out", ResultsDir,
		"--quiet"}
	secret := o.secretArgs()
	for i, a := range o.extraArgs() {
		if secret[i] {
			a = "$(" + runArgEnv(i) + ")"
		}
		args = append(args, a)
	}
	return args, nil
}

// extraArgs are the runners' flags beyond the split's: the Prometheus
// outputs, then RunArgs.
func (o Options) extraArgs() []string {
	var args []string
	for _, u := range o.PrometheusRW {
		args = append(args, "--out=prometheus-rw="+u)
	}
	return append(args, o.RunArgs...)
}

// secretArgs are the extra args that carry a secret (a credential header,
// a URL's userinfo, a --redact-query value), by index: the Secret holds
// them under runArgKey(i) and the runner's args refer to them through an
// environment variable, runArgEnv(i).
func (o Options) secretArgs() map[int]bool {
	extra := o.extraArgs()
	red := redact.FromArgs(extra)
	out := map[int]bool{}
	for i, a := range extra {
		if red.Text(a) != a {
			out[i] = true
		}
	}
	return out
}

func runArgKey(i int) string { return fmt.Sprintf("run-arg-%d", i) }
func runArgEnv(i int) string { return fmt.Sprintf("KNEE_RUN_ARG_%d", i) }

// CoordinatorArgs are the coordinator pod's knee arguments.
func (o Options) CoordinatorArgs() []string {
	args := []string{"coordinate", "--runners", strconv.Itoa(o.Runners), "--dir", ResultsDir,
		"--listen", ":" + strconv.Itoa(o.port()),
		"--ready-timeout", o.ReadyTimeout.String(), "--parts-timeout", o.PartsTimeout.String(),
		"--linger", o.Linger.String()}
	for _, t := range o.Thresholds {
		args = append(args, "--threshold", t)
	}
	return args
}

// deadlines are the runners' and the coordinator's activeDeadlineSeconds.
func (o Options) deadlines() (runners, coordinator int64) {
	if o.ActiveDeadline > 0 {
		s := int64(o.ActiveDeadline / time.Second)
		return s, s
	}
	slack := 5 * time.Minute // image pulls, the parts' upload, the merge
	return int64((o.ReadyTimeout + o.PartsTimeout + slack) / time.Second),
		int64((o.ReadyTimeout + o.PartsTimeout + o.Linger + slack) / time.Second)
}

func resourceReq(r Resources) *resourceRequirements {
	m := map[string]string{}
	if r.CPU != "" {
		m["cpu"] = r.CPU
	}
	if r.Memory != "" {
		m["memory"] = r.Memory
	}
	if len(m) == 0 {
		return nil
	}
	return &resourceRequirements{Requests: m, Limits: m}
}

// Manifests returns the objects as one YAML stream: the Secret, the
// coordinator's Service and Job, and the runners' Indexed Job.
func Manifests(o Options) ([]byte, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	runArgs, err := o.RunnerArgs()
	if err != nil {
		return nil, err
	}
	labels := func(role string) map[string]string {
		return map[string]string{"app.kubernetes.io/name": "knee", "knee/test": o.TestName(), "knee/role": role}
	}
	podLabels := func(role string) map[string]string {
		m := labels(role)
		for k, v := range o.Labels {
			if _, own := m[k]; !own {
				m[k] = v
			}
		}
		return m
	}
	meta := func(name, role string) objectMeta {
		return objectMeta{Name: name, Namespace: o.Namespace, Labels: labels(role)}
	}
	scenarioVol := volume{Name: "scenario", Secret: &secretVolume{SecretName: o.SecretName(),
		Items: []keyToPath{{Key: ScenarioFile, Path: ScenarioFile}}}}
	tokenEnv := envVar{Name: coord.TokenEnv, ValueFrom: &envSource{SecretKeyRef: &secretKeyRef{Name: o.SecretName(), Key: TokenKey}}}
	emptyDirs := []volume{{Name: "results", EmptyDir: &emptyDir{}}, {Name: "tmp", EmptyDir: &emptyDir{}}}
	mounts := []volumeMount{{Name: "results", MountPath: ResultsDir}, {Name: "tmp", MountPath: "/tmp"}}
	uid := int64(65532) // the image's non-root user
	security := &podSecurityContext{RunAsNonRoot: true, RunAsUser: uid, RunAsGroup: uid, FSGroup: uid,
		SeccompProfile: &seccomp{Type: "RuntimeDefault"}}
	no := false
	csc := &containerSecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: true,
		Capabilities: &capabilities{Drop: []string{"ALL"}}}
	var pullSecrets []localObjectReference
	for _, s := range o.ImagePullSecrets {
		pullSecrets = append(pullSecrets, localObjectReference{Name: s})
	}
	pod := func(role string, c container, vols []volume) podTemplate {
		return podTemplate{Metadata: objectMeta{Labels: podLabels(role), Annotations: o.Annotations}, Spec: podSpec{
			RestartPolicy: "Never", SecurityContext: security, Volumes: vols, Containers: []container{c},
			NodeSelector: o.NodeSelector, Tolerations: o.Tolerations, ImagePullSecrets: pullSecrets,
			ServiceAccountName: o.ServiceAccount, PriorityClassName: o.PriorityClass,
			// knee talks to no Kubernetes API: no token in the pod unless asked for.
			AutomountServiceAccountToken: &no,
		}}
	}
	// A run arg that carries a credential is kept in the Secret and reaches
	// the runners through an environment variable: no other object inlines it.
	data := map[string]string{ScenarioFile: string(o.Scenario), TokenKey: o.Token}
	runnerEnv := []envVar{
		{Name: "JOB_COMPLETION_INDEX", ValueFrom: &envSource{FieldRef: &fieldRef{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
		{Name: "POD_NAME", ValueFrom: &envSource{FieldRef: &fieldRef{FieldPath: "metadata.name"}}},
	}
	secretArgs := o.secretArgs()
	for i, a := range o.extraArgs() {
		if secretArgs[i] {
			data[runArgKey(i)] = a
			runnerEnv = append(runnerEnv, envVar{Name: runArgEnv(i), ValueFrom: &envSource{SecretKeyRef: &secretKeyRef{Name: o.SecretName(), Key: runArgKey(i)}}})
		}
	}
	runnerEnv = append(runnerEnv, tokenEnv)
	runnerPod := pod("runner", container{
		Name: "knee", Image: o.Image, ImagePullPolicy: o.ImagePullPolicy, Args: runArgs,
		VolumeMounts: append([]volumeMount{{Name: "scenario", MountPath: ScenarioDir, ReadOnly: true}}, mounts...),
		Env:          runnerEnv,
		Resources:    resourceReq(o.Runner), SecurityContext: csc,
	}, append([]volume{scenarioVol}, emptyDirs...))
	selector := &labelSelector{MatchLabels: labels("runner")}
	switch o.Spread {
	case SpreadEven:
		runnerPod.Spec.TopologySpreadConstraints = []topologySpread{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
			WhenUnsatisfiable: "DoNotSchedule", LabelSelector: selector}}
	case SpreadOnePerNode:
		runnerPod.Spec.Affinity = &affinity{PodAntiAffinity: &podAntiAffinity{Required: []podAffinityTerm{
			{LabelSelector: selector, TopologyKey: "kubernetes.io/hostname"}}}}
	}
	port := int32(o.port())
	coordPod := pod("coordinator", container{
		Name: "coordinator", Image: o.Image, ImagePullPolicy: o.ImagePullPolicy, Args: o.CoordinatorArgs(),
		Ports: []containerPort{{Name: "http", ContainerPort: port}}, VolumeMounts: mounts, Env: []envVar{tokenEnv},
		Resources: resourceReq(o.Coordinator), SecurityContext: csc,
		ReadinessProbe: &probe{TCPSocket: &tcpSocket{Port: port}, PeriodSeconds: 2},
	}, emptyDirs)
	runDeadline, coordDeadline := o.deadlines()
	var ttl *int32
	if o.TTLAfterFinished > 0 {
		s := int32(o.TTLAfterFinished / time.Second)
		ttl = &s
	}
	runners, one, zero := int32(o.Runners), int32(1), int32(0)
	objs := []any{
		secret{APIVersion: "v1", Kind: "Secret", Metadata: meta(o.SecretName(), "scenario"), Type: "Opaque",
			StringData: data},
		service{APIVersion: "v1", Kind: "Service", Metadata: meta(o.CoordinatorName(), "coordinator"), Spec: serviceSpec{
			Selector: labels("coordinator"),
			Ports:    []servicePort{{Name: "http", Port: port, TargetPort: port}},
		}},
		job{APIVersion: "batch/v1", Kind: "Job", Metadata: meta(o.CoordinatorName(), "coordinator"), Spec: jobSpec{
			Completions: &one, Parallelism: &one, BackoffLimit: &zero,
			ActiveDeadlineSeconds: &coordDeadline, TTLSecondsAfterFinished: ttl, Template: coordPod,
		}},
		job{APIVersion: "batch/v1", Kind: "Job", Metadata: meta(o.TestName()+"-runners", "runner"), Spec: jobSpec{
			CompletionMode: "Indexed", Completions: &runners, Parallelism: &runners, BackoffLimit: &zero,
			ActiveDeadlineSeconds: &runDeadline, TTLSecondsAfterFinished: ttl, Template: runnerPod,
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

// ParseToleration reads key[=value]:effect, or key:effect with the
// operator Exists, as kubectl taint writes taints.
func ParseToleration(s string) (Toleration, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok || kv == "" {
		return Toleration{}, fmt.Errorf("--toleration %q: want key=value:effect or key:effect, e.g. dedicated=load:NoSchedule", s)
	}
	t := Toleration{Effect: effect}
	if k, v, hasValue := strings.Cut(kv, "="); hasValue {
		t.Key, t.Operator, t.Value = k, "Equal", v
	} else {
		t.Key, t.Operator = kv, "Exists"
	}
	if !slices.Contains(effects, effect) {
		return t, fmt.Errorf("--toleration %q: effect %q: use NoSchedule, PreferNoSchedule or NoExecute", s, effect)
	}
	return t, nil
}

// The few Kubernetes API fields the manifests use, with its JSON names.

type objectMeta struct {
	Name        string            `yaml:"name,omitempty"`
	Namespace   string            `yaml:"namespace,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type secret struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   objectMeta        `yaml:"metadata"`
	Type       string            `yaml:"type"`
	StringData map[string]string `yaml:"stringData"`
}

type service struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   objectMeta  `yaml:"metadata"`
	Spec       serviceSpec `yaml:"spec"`
}

type serviceSpec struct {
	Selector map[string]string `yaml:"selector"`
	Ports    []servicePort     `yaml:"ports"`
}

type servicePort struct {
	Name       string `yaml:"name"`
	Port       int32  `yaml:"port"`
	TargetPort int32  `yaml:"targetPort"`
}

type job struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       jobSpec    `yaml:"spec"`
}

type jobSpec struct {
	CompletionMode          string      `yaml:"completionMode,omitempty"`
	Completions             *int32      `yaml:"completions,omitempty"`
	Parallelism             *int32      `yaml:"parallelism,omitempty"`
	BackoffLimit            *int32      `yaml:"backoffLimit,omitempty"`
	ActiveDeadlineSeconds   *int64      `yaml:"activeDeadlineSeconds,omitempty"`
	TTLSecondsAfterFinished *int32      `yaml:"ttlSecondsAfterFinished,omitempty"`
	Template                podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata objectMeta `yaml:"metadata"`
	Spec     podSpec    `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy                string                 `yaml:"restartPolicy"`
	ServiceAccountName           string                 `yaml:"serviceAccountName,omitempty"`
	AutomountServiceAccountToken *bool                  `yaml:"automountServiceAccountToken,omitempty"`
	PriorityClassName            string                 `yaml:"priorityClassName,omitempty"`
	SecurityContext              *podSecurityContext    `yaml:"securityContext,omitempty"`
	NodeSelector                 map[string]string      `yaml:"nodeSelector,omitempty"`
	Tolerations                  []Toleration           `yaml:"tolerations,omitempty"`
	Affinity                     *affinity              `yaml:"affinity,omitempty"`
	TopologySpreadConstraints    []topologySpread       `yaml:"topologySpreadConstraints,omitempty"`
	ImagePullSecrets             []localObjectReference `yaml:"imagePullSecrets,omitempty"`
	Containers                   []container            `yaml:"containers"`
	Volumes                      []volume               `yaml:"volumes"`
}

type podSecurityContext struct {
	RunAsNonRoot   bool     `yaml:"runAsNonRoot"`
	RunAsUser      int64    `yaml:"runAsUser"`
	RunAsGroup     int64    `yaml:"runAsGroup"`
	FSGroup        int64    `yaml:"fsGroup"`
	SeccompProfile *seccomp `yaml:"seccompProfile,omitempty"`
}

type seccomp struct {
	Type string `yaml:"type"`
}

type containerSecurityContext struct {
	AllowPrivilegeEscalation *bool         `yaml:"allowPrivilegeEscalation,omitempty"`
	ReadOnlyRootFilesystem   bool          `yaml:"readOnlyRootFilesystem"`
	Capabilities             *capabilities `yaml:"capabilities,omitempty"`
}

type capabilities struct {
	Drop []string `yaml:"drop"`
}

type localObjectReference struct {
	Name string `yaml:"name"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type topologySpread struct {
	MaxSkew           int32          `yaml:"maxSkew"`
	TopologyKey       string         `yaml:"topologyKey"`
	WhenUnsatisfiable string         `yaml:"whenUnsatisfiable"`
	LabelSelector     *labelSelector `yaml:"labelSelector"`
}

type affinity struct {
	PodAntiAffinity *podAntiAffinity `yaml:"podAntiAffinity,omitempty"`
}

type podAntiAffinity struct {
	Required []podAffinityTerm `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
}

type podAffinityTerm struct {
	LabelSelector *labelSelector `yaml:"labelSelector"`
	TopologyKey   string         `yaml:"topologyKey"`
}

type container struct {
	Name            string                    `yaml:"name"`
	Image           string                    `yaml:"image"`
	ImagePullPolicy string                    `yaml:"imagePullPolicy,omitempty"`
	Args            []string                  `yaml:"args"`
	Ports           []containerPort           `yaml:"ports,omitempty"`
	Env             []envVar                  `yaml:"env,omitempty"`
	Resources       *resourceRequirements     `yaml:"resources,omitempty"`
	VolumeMounts    []volumeMount             `yaml:"volumeMounts"`
	ReadinessProbe  *probe                    `yaml:"readinessProbe,omitempty"`
	SecurityContext *containerSecurityContext `yaml:"securityContext,omitempty"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int32  `yaml:"containerPort"`
}

type resourceRequirements struct {
	Requests map[string]string `yaml:"requests"`
	Limits   map[string]string `yaml:"limits"`
}

type probe struct {
	TCPSocket     *tcpSocket `yaml:"tcpSocket"`
	PeriodSeconds int32      `yaml:"periodSeconds"`
}

type tcpSocket struct {
	Port int32 `yaml:"port"`
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

type fieldRef struct {
	FieldPath string `yaml:"fieldPath"`
}

type secretKeyRef struct {
	Name string `yaml:"name"`
	Key  string `yaml:"key"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type volume struct {
	Name     string        `yaml:"name"`
	Secret   *secretVolume `yaml:"secret,omitempty"`
	EmptyDir *emptyDir     `yaml:"emptyDir,omitempty"`
}

type secretVolume struct {
	SecretName string      `yaml:"secretName"`
	Items      []keyToPath `yaml:"items,omitempty"`
}

type keyToPath struct {
	Key  string `yaml:"key"`
	Path string `yaml:"path"`
}

type emptyDir struct{}
