package k8s

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// Test is what knee k8s fetch needs of a test's manifests.
type Test struct {
	Namespace string // "" for kubectl's context
	Service   string // the coordinator's
	Port      int
	Token     string
}

// ReadTest finds the coordinator's Service and token in the manifests
// knee k8s job wrote.
func ReadTest(stream []byte) (Test, error) {
	var t Test
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	for {
		var obj struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name      string            `yaml:"name"`
				Namespace string            `yaml:"namespace"`
				Labels    map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			StringData map[string]string `yaml:"stringData"`
			Data       map[string]string `yaml:"data"`
			Spec       struct {
				Ports []struct {
					Port int `yaml:"port"`
				} `yaml:"ports"`
			} `yaml:"spec"`
		}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return t, fmt.Errorf("not the manifests of knee k8s job: %w", err)
		}
		role := obj.Metadata.Labels["knee/role"]
		switch {
		case obj.Kind == "Service" && role == "coordinator" && len(obj.Spec.Ports) > 0:
			t.Service, t.Namespace, t.Port = obj.Metadata.Name, obj.Metadata.Namespace, obj.Spec.Ports[0].Port
		case obj.Kind == "Secret" && role == "scenario":
			t.Token = obj.StringData[TokenKey]
			if b, err := base64.StdEncoding.DecodeString(obj.Data[TokenKey]); err == nil && t.Token == "" {
				t.Token = string(b)
			}
		}
	}
	if t.Service == "" || t.Token == "" {
		return t, errors.New("no coordinator Service and token in them: give the file knee k8s job wrote (--out)")
	}
	return t, nil
}

var forwarding = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Forwarding from 127\.0\.0\.1:([0-9]+) -> `) })

// PortForward runs kubectl port-forward to the test's coordinator on a
// free local port and returns its URL, and a channel closed when kubectl
// exits (the pod went, or the connection to the cluster broke). kubectl
// stops with ctx.
func PortForward(ctx context.Context, kubectl string, t Test) (string, <-chan struct{}, error) {
	args := []string{"port-forward", "--address", "127.0.0.1"}
	if t.Namespace != "" {
		args = append(args, "--namespace", t.Namespace)
	}
	args = append(args, "service/"+t.Service, ":"+strconv.Itoa(t.Port))
	cmd := exec.CommandContext(ctx, kubectl, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("%s: %w (fix: install kubectl, or give --url with your own port-forward)", kubectl, err)
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := forwarding().FindStringSubmatch(sc.Text()); m != nil {
				select {
				case port <- m[1]:
				default:
				}
			}
		}
	}()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case p := <-port:
		return "http://127.0.0.1:" + p, exited, nil
	case <-exited:
		return "", nil, fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
	case <-ctx.Done():
		<-exited
		return "", nil, ctx.Err()
	}
}
