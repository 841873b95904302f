package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// exampleCommands splits a command's Example into the knee commands it
// shows: continuation lines joined, comments and redirections dropped,
// words split as a POSIX shell splits them (quotes, backslashes).
func exampleCommands(t *testing.T, example string) (cmds [][]string, comments []string) {
	t.Helper()
	joined := strings.ReplaceAll(example, "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		words, comment, err := shellWords(line)
		if err != nil {
			t.Errorf("example %q: %v", line, err)
			continue
		}
		cmds = append(cmds, words)
		comments = append(comments, comment)
	}
	return cmds, comments
}

// shellWords splits line into words; it stops at an unquoted # (the rest is
// the comment) or > or < (a redirection: the rest is dropped).
func shellWords(line string) (words []string, comment string, err error) {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, "", fmt.Errorf("unterminated '")
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, "", fmt.Errorf(`unterminated "`)
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			flush()
			return words, strings.TrimSpace(line[i+1:]), nil
		case (c == '>' || c == '<') && !inWord:
			flush()
			return words, "", nil
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, "", nil
}

// otherTools may stand in an example beside knee: the steps a user takes with
// them cannot run here, but every example must still show a knee command.
var otherTools = map[string]bool{"kubectl": true, "docker": true}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		line    string
		want    []string
		comment string
	}{
		{`knee run --url 'http://h/{isbn}?a=1' --var x=1,2`, []string{"knee", "run", "--url", "http://h/{isbn}?a=1", "--var", "x=1,2"}, ""},
		{`knee report --goal "Can we hold 250 req/s at p95 < 200 ms?" --action "..."`, []string{"knee", "report", "--goal", "Can we hold 250 req/s at p95 < 200 ms?", "--action", "..."}, ""},
		{`knee tail --p 0.01   # 18.2 % of pages`, []string{"knee", "tail", "--p", "0.01"}, "18.2 % of pages"},
		{`knee completion zsh > "${fpath[1]}/_knee"`, []string{"knee", "completion", "zsh"}, ""},
		{`KNEE_OUT=/tmp/r knee run a\ b`, []string{"KNEE_OUT=/tmp/r", "knee", "run", "a b"}, ""},
	} {
		got, comment, err := shellWords(tc.line)
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") || comment != tc.comment {
			t.Errorf("%s:\n got %q %q %v\nwant %q %q", tc.line, got, comment, err, tc.want, tc.comment)
		}
	}
}

// Every command's --help shows an example, and every example parses as
// written: its command exists, its flags and values are accepted by that
// command's own flag set, its arguments by its own argument check, and its
// KNEE_ variables name flags of the command. Each example is parsed on a
// fresh command tree, as a new process would.
func TestEveryExampleParses(t *testing.T) {
	env := Env{Getenv: func(string) string { return "" }}
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		all = append(all, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(Command(env))
	n := 0
	for _, c := range all {
		path := c.CommandPath()
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s --help shows no example", path)
			continue
		}
		cmds, _ := exampleCommands(t, c.Example)
		for _, words := range cmds {
			if checkKneeCommand(t, env, path, words) {
				n++
			}
		}
	}
	if n < 25 {
		t.Errorf("only %d example commands parsed", n)
	}
}

// checkKneeCommand parses one example command (KNEE_ variables first, then
// knee and its words) on a fresh command tree, as a new process would: its
// command exists, its flags and values are accepted by that command's own
// flag set, its arguments by its own argument check, and its KNEE_ variables
// name flags of the command. where names the example in errors. It reports
// whether the command was knee's (another tool's step is skipped).
func checkKneeCommand(t *testing.T, env Env, where string, words []string) bool {
	t.Helper()
	var vars []string
	for len(words) > 0 && strings.Contains(words[0], "=") && strings.HasPrefix(words[0], EnvPrefix) {
		vars, words = append(vars, words[0]), words[1:]
	}
	line := strings.Join(words, " ")
	if len(words) > 0 && otherTools[words[0]] {
		return false // a step outside knee (applying manifests), shown for completeness
	}
	if len(words) == 0 || words[0] != "knee" {
		t.Errorf("%s: example %q does not start with knee", where, line)
		return false
	}
	root := Command(env)
	found, rest, err := root.Find(words[1:])
	if err != nil {
		t.Errorf("%s: example %q: %v", where, line, err)
		return false
	}
	if !strings.HasPrefix(strings.Join(words, " ")+" ", found.CommandPath()+" ") {
		t.Errorf("%s: example %q runs %q instead", where, line, found.CommandPath())
		return false
	}
	if err := found.ParseFlags(rest); err != nil {
		t.Errorf("%s: example %q: %v", where, line, err)
		return false
	}
	if err := found.ValidateArgs(found.Flags().Args()); err != nil {
		t.Errorf("%s: example %q: arguments: %v", where, line, err)
	}
	for _, v := range vars {
		name, value, _ := strings.Cut(v, "=")
		if err := applyEnv(found, func(k string) string {
			if k == name {
				return value
			}
			return ""
		}); err != nil {
			t.Errorf("%s: example %q: %v", where, line, err)
		}
		flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, EnvPrefix), "_", "-"))
		if f := found.Flags().Lookup(flag); f == nil || !f.Changed {
			t.Errorf("%s: example %q: %s names no flag of %s", where, line, name, found.CommandPath())
		}
	}
	return true
}

// The examples that need no target, no network and no files run as written,
// and say what they show: knee tail's comment is its output (1-(1-0.01)^20 =
// 18.2 %), the completion scripts are scripts for their shell.
func TestExamplesRunAsWritten(t *testing.T) {
	var tail *cobra.Command
	root := Command(Env{Getenv: func(string) string { return "" }})
	for _, c := range root.Commands() {
		if c.Name() == "tail" {
			tail = c
		}
	}
	cmds, comments := exampleCommands(t, tail.Example)
	if len(cmds) == 0 {
		t.Fatal("knee tail has no example")
	}
	for i, words := range cmds {
		code, out, stderr := runKnee(t, words[1:]...)
		if code != 0 {
			t.Errorf("%q: exit %d: %s", words, code, stderr)
		}
		if comments[i] == "" || !strings.Contains(out, comments[i]) {
			t.Errorf("%q prints %q, its comment says %q", words, out, comments[i])
		}
	}
	if !strings.Contains(comments[0], "18.2 %") {
		t.Errorf("the tail example's figure changed: %q (1-(1-0.01)^20 = 0.1821)", comments[0])
	}
	for shell, marker := range map[string]string{"bash": "complete -o default -F __start_knee knee", "zsh": "#compdef knee", "fish": "complete -c knee", "powershell": "Register-ArgumentCompleter"} {
		code, out, stderr := runKnee(t, "completion", shell)
		if code != 0 || !strings.Contains(out, marker) {
			t.Errorf("knee completion %s: exit %d, %d bytes, no %q: %s", shell, code, len(out), marker, stderr)
		}
	}
}
