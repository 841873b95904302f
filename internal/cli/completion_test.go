package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Flag values and arguments complete as a shell asks cobra for them
// (knee __complete ARGS... ”): the candidates, then ":" and the directive.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want      []string
		directive cobra.ShellCompDirective
	}{
		{[]string{"run", "--executor", ""}, []string{"constant-arrival-rate", "ramping-arrival-rate", "constant-vus", "ramping-vus"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"steps", "--method", ""}, []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"report", "--format", ""}, []string{"md", "html"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"analyze", "--format", ""}, []string{"auto", "k6-csv", "k6-json", "hlog", "list"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"analyze", "--unit", ""}, []string{"ns", "us", "ms", "s"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"import", "--model", ""}, []string{"open", "closed"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"run", "--summary-export", ""}, []string{"json"}, cobra.ShellCompDirectiveFilterFileExt},
		{[]string{"run", "--junit", ""}, []string{"xml"}, cobra.ShellCompDirectiveFilterFileExt},
		{[]string{"run", "--out", ""}, nil, cobra.ShellCompDirectiveFilterDirs},
		{[]string{"run", ""}, []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt},
		{[]string{"compare", ""}, nil, cobra.ShellCompDirectiveFilterDirs},
		{[]string{"compare", "a", "--vs", ""}, nil, cobra.ShellCompDirectiveFilterDirs},
		{[]string{"run", "--url", ""}, nil, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"lab", "co", "--summary-export", ""}, []string{"json"}, cobra.ShellCompDirectiveFilterFileExt},
	} {
		code, out, stderr := runKnee(t, append([]string{cobra.ShellCompRequestCmd}, tc.args...)...)
		if code != 0 {
			t.Errorf("%q: exit %d: %s", tc.args, code, stderr)
			continue
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		got, last := lines[:len(lines)-1], lines[len(lines)-1]
		if strings.Join(got, ",") != strings.Join(tc.want, ",") || last != ":"+strconv.Itoa(int(tc.directive)) {
			t.Errorf("%q: got %q %s, want %q :%d", tc.args, got, last, tc.want, tc.directive)
		}
	}
}
