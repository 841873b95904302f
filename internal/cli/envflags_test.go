package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func runKneeEnv(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(Env{Args: args, Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }})
	return code, out.String(), errb.String()
}

// KNEE_ variables set flags; a flag on the command line wins; a bad value
// is bad input naming the variable. knee tail's figure is computed by hand:
// 1-(1-0.01)^20 = 18.2 %, 1-(1-0.01)^1 = 1.0 %.
func TestEnvSetsFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		code int
		want string // in stdout, or in stderr when code != 0
	}{
		{"variables only", map[string]string{"KNEE_P": "0.01", "KNEE_CALLS": "20"}, []string{"tail"}, 0, "18.2 % of pages"},
		{"the flag wins", map[string]string{"KNEE_P": "0.01", "KNEE_CALLS": "20"}, []string{"tail", "--calls", "1"}, 0, "1.0 % of pages"},
		{"empty is unset", map[string]string{"KNEE_P": "0.01", "KNEE_CALLS": ""}, []string{"tail", "--calls", "20"}, 0, "18.2 % of pages"},
		{"a bad value", map[string]string{"KNEE_CALLS": "many"}, []string{"tail", "--p", "0.01"}, ExitUsage, `KNEE_CALLS="many" (the variable of --calls)`},
		{"a nested command", map[string]string{"KNEE_CPUS": "lots"}, []string{"lab", "co"}, ExitUsage, "KNEE_CPUS"},
	} {
		code, out, stderr := runKneeEnv(t, tc.vars, tc.args...)
		got := out
		if tc.code != 0 {
			got = stderr
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%s: exit %d (want %d), output %q does not contain %q", tc.name, code, tc.code, got, tc.want)
		}
	}
}

// A repeatable flag takes one value per line; a bool takes true. Two
// thresholds from KNEE_THRESHOLD give two JUnit test cases.
func TestEnvRepeatableAndBool(t *testing.T) {
	url := loopbackServer(t) + "/"
	dir := t.TempDir()
	junit := filepath.Join(dir, "j.xml")
	vars := map[string]string{
		"KNEE_THRESHOLD": "requests==20\nerrors<1%\n",
		"KNEE_QUIET":     "true",
		"KNEE_OUT":       filepath.Join(dir, "runs"),
		"KNEE_JUNIT":     junit,
	}
	code, _, stderr := runKneeEnv(t, vars, "run", "--rate", "20", "--duration", "1s", "--url", url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "achieved") {
		t.Errorf("KNEE_QUIET=true left progress lines: %s", stderr)
	}
	d := readJUnit(t, junit)
	if d.Tests != 2 || d.Failures != 0 {
		t.Errorf("%d thresholds (%d failed), want the 2 of KNEE_THRESHOLD, passing", d.Tests, d.Failures)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "run.json")); len(m) != 1 {
		t.Errorf("KNEE_OUT: %d run directories under it, want 1", len(m))
	}
}

// Every flag of every command can be set by its variable: a new flag needs
// nothing more, and a flag type applyEnv cannot set fails here.
func TestEveryFlagHasAVariable(t *testing.T) {
	sample := map[string]string{
		"bool": "true", "int": "3", "uint": "3", "uint64": "3", "int64": "3", "float64": "0.5",
		"duration": "2s", "string": "x", "client": "net/http", "stringArray": "x\ny", "stringSlice": "x,y", "count": "1",
	}
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cmds = append(cmds, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(Command(Env{Getenv: func(string) string { return "" }}))
	n := 0
	for _, c := range cmds {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			v, ok := sample[f.Value.Type()]
			if !ok {
				t.Errorf("%s --%s: type %s has no sample value here", c.CommandPath(), f.Name, f.Value.Type())
				return
			}
			// A fresh tree per flag: Set changes the flag.
			fresh, _, err := Command(Env{Getenv: func(string) string { return "" }}).Find(strings.Fields(c.CommandPath())[1:])
			if err != nil {
				t.Fatal(err)
			}
			err = applyEnv(fresh, func(k string) string {
				if k == EnvName(f.Name) {
					return v
				}
				return ""
			})
			ff := fresh.Flags().Lookup(f.Name)
			if err != nil || ff == nil || !ff.Changed {
				t.Errorf("%s: %s=%q did not set --%s: %v", c.CommandPath(), EnvName(f.Name), v, f.Name, err)
			}
			n++
		})
	}
	if n < 100 {
		t.Errorf("only %d flags checked", n)
	}
}
