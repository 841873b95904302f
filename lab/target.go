// Package lab wires the article's experiments end to end: it starts the
// Bookstore as a child process in its own cgroup (CPU limit, freezer), runs
// the load through package runner and reads the results with package analyze.
// It duplicates no engine logic.
package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/knee-dev/knee/fault"
)

// ListeningPrefix starts the line `knee lab serve` prints once it listens;
// the address follows.
const ListeningPrefix = "bookstore listening on "

// TargetOptions start a Bookstore child.
type TargetOptions struct {
	Executable string   // the knee binary (its `lab serve` runs the Bookstore)
	CPUs       float64  // CPU limit through the cgroup; 0 for none
	Args       []string // more `knee lab serve` flags (--db, --max-pool, ...)
	Stderr     io.Writer
}

// Target is a Bookstore running as a child process.
type Target struct {
	PID     int
	URL     string        // http://127.0.0.1:PORT
	Freezer fault.Freezer // its cgroup, or SIGSTOP of its PID
	Cgroup  *fault.Cgroup // nil when cgroups are not usable here
	Notes   []string      // what could not be done and what was done instead

	cmd    *exec.Cmd
	done   chan error
	stderr *prefixWriter // the Bookstore's stderr, when shown
}

// StartBookstore starts `knee lab serve` on a free loopback port in a cgroup
// of its own when the machine allows it, limits its CPU when asked, and waits
// until /healthz answers.
func StartBookstore(ctx context.Context, opt TargetOptions) (*Target, error) {
	t := &Target{done: make(chan error, 1)}
	caps := fault.Detect()
	if opt.CPUs > 0 && !caps.CPU {
		return nil, fmt.Errorf("--cpus %g: cannot limit CPU here: %s", opt.CPUs, caps.CPUReason)
	}
	if caps.Freezer || (opt.CPUs > 0 && caps.CPU) {
		cg, err := fault.NewCgroup(caps.Hierarchy, "bookstore-"+strconv.FormatInt(time.Now().UnixNano(), 36))
		if err != nil {
			t.Notes = append(t.Notes, "no cgroup for the target ("+err.Error()+"): freezing with SIGSTOP instead")
		} else {
			t.Cgroup = cg
		}
	} else {
		t.Notes = append(t.Notes, "cgroup freezer not usable ("+caps.FreezerReason+"): freezing with SIGSTOP instead")
	}
	if err := t.start(ctx, opt); err != nil {
		if t.Cgroup != nil {
			err = errors.Join(err, t.Cgroup.Remove())
		}
		return nil, err
	}
	return t, nil
}

func (t *Target) start(ctx context.Context, opt TargetOptions) error {
	if t.Cgroup != nil && opt.CPUs > 0 {
		if err := t.Cgroup.SetCPUs(opt.CPUs); err != nil {
			return fmt.Errorf("limit the Bookstore to %g CPU: %w", opt.CPUs, err)
		}
	}
	args := append([]string{"lab", "serve", "--addr", "127.0.0.1:0"}, opt.Args...)
	cmd := exec.Command(opt.Executable, args...)
	cmd.Env = childEnv(os.Environ())
	if opt.Stderr != nil {
		t.stderr = &prefixWriter{w: opt.Stderr, prefix: "bookstore: "}
		cmd.Stderr = t.stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} // never outlive knee
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if t.Cgroup != nil {
		err = fault.StartInCgroup(ctx, cmd, t.Cgroup)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return fmt.Errorf("start the Bookstore: %w", err)
	}
	t.cmd, t.PID = cmd, cmd.Process.Pid
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), ListeningPrefix); ok {
				addr <- strings.TrimSpace(a)
			}
		}
		io.Copy(io.Discard, out)
		t.done <- cmd.Wait()
	}()
	return t.await(ctx, addr)
}

// await waits for the listening line, then for /healthz, then picks the freezer.
func (t *Target) await(ctx context.Context, addr <-chan string) error {
	timeout := time.NewTimer(60 * time.Second) // seeding 10,000 books takes a moment under load
	defer timeout.Stop()
	select {
	case a := <-addr:
		t.URL = "http://" + a
	case err := <-t.done:
		return fmt.Errorf("the Bookstore exited before listening: %v", err)
	case <-timeout.C:
		return errors.Join(errors.New("the Bookstore did not start within 60 s"), t.Stop())
	case <-ctx.Done():
		return errors.Join(ctx.Err(), t.Stop())
	}
	if err := waitHealthy(ctx, t.URL); err != nil {
		return errors.Join(err, t.Stop())
	}
	if t.Cgroup != nil {
		t.Freezer = t.Cgroup
		return nil
	}
	fr, err := fault.NewSignalFreezer(t.PID)
	if err != nil {
		return errors.Join(err, t.Stop())
	}
	t.Freezer = fr
	return nil
}

func waitHealthy(ctx context.Context, base string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for i := 0; i < 100; i++ {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("the Bookstore at %s never became healthy", base)
}

// Stop thaws the target, ends it with SIGTERM (SIGKILL after 10 s) and
// removes its cgroup. Safe to call twice.
func (t *Target) Stop() error {
	if t.cmd == nil {
		return nil
	}
	var errs []error
	if t.Freezer != nil {
		errs = append(errs, t.Freezer.Thaw())
	} else if t.Cgroup != nil {
		errs = append(errs, t.Cgroup.Thaw())
	}
	if t.stderr != nil {
		// What the Bookstore says of the SIGTERM reads like a failure
		// ("terminated: stopping gracefully…"); it was the lab's doing.
		t.stderr.end(fmt.Sprintf("stopped by the lab (pid %d)", t.PID))
	}
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-t.done:
	case <-time.After(10 * time.Second):
		_ = t.cmd.Process.Kill()
		<-t.done
	}
	t.cmd = nil
	if t.Cgroup != nil {
		errs = append(errs, t.Cgroup.Remove())
	}
	return errors.Join(errs...)
}

// prefixWriter marks each line the Bookstore child writes, so its messages
// are not taken for knee's own.
type prefixWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	midLine bool
	ended   bool // end was called: what the child writes after is dropped
}

// end writes its last line, msg, and drops whatever the child writes after.
func (p *prefixWriter) end(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended = true
	if p.midLine {
		msg = "\n" + msg
	}
	fmt.Fprintf(p.w, "%s%s\n", p.prefix, msg)
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return len(b), nil
	}
	var out []byte
	for _, c := range b {
		if !p.midLine {
			if c == '\n' {
				continue // a blank line says nothing worth marking
			}
			out = append(out, p.prefix...)
			p.midLine = true
		}
		out = append(out, c)
		if c == '\n' {
			p.midLine = false
		}
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// childEnv is the Bookstore's environment: the user's, without the KNEE_
// variables that set knee's flags, so that KNEE_CPUS meant for knee lab
// curve does not also become the child's --cpus. KNEE_TEST_ variables are
// the tests' hooks and pass.
func childEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, "KNEE_") && !strings.HasPrefix(kv, "KNEE_TEST_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
