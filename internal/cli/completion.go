package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/importer"
	"github.com/knee-dev/knee/k8s"
	"github.com/knee-dev/knee/load"
)

// completeFlagValues registers, on every command of the tree under root,
// the completion of the flags whose values are a closed set (executors,
// formats, units, models) or files and directories (outputs, run
// directories, scenario files), and of the commands' arguments. It goes by
// flag name, so a command gains them by naming its flags as the others do.
func completeFlagValues(root *cobra.Command) {
	var importFormats []string
	for _, f := range importer.Formats() {
		importFormats = append(importFormats, string(f))
	}
	fixed := map[string][]string{
		"executor":          {load.KindConstantArrivalRate, load.KindRampingArrivalRate, load.KindConstantVUs, load.KindRampingVUs},
		"unit":              {"ns", "us", "ms", "s"},
		"model":             {load.ModelOpen, load.ModelClosed},
		"method":            {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"},
		"spread":            {k8s.SpreadEven, k8s.SpreadOnePerNode, k8s.SpreadNone},
		"image-pull-policy": {"Always", "IfNotPresent", "Never"},
	}
	files := map[string][]string{ // flag: file extensions (none: any file)
		"summary-export": {"json"},
		"junit":          {"xml"},
		"db":             nil,
	}
	dirs := []string{"out", "plots", "state-dir", "target-cgroup", "dir"}
	noFiles := []string{"url", "metrics", "postgres", "addr", "name", "body", "header", "var", "threshold", "stages", "fault", "goal", "action", "coordinator", "image", "listen", "toleration", "node-selector", "label", "annotation", "prometheus-rw"}
	// Arguments: a scenario file, run directories. analyze, curve and import
	// read a file or a run directory: the shell's own completion.
	args := map[string]cobra.CompletionFunc{
		"run":     cobra.FixedCompletions([]string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt),
		"report":  cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs),
		"compare": cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs),
	}

	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		register := func(flag string, fn cobra.CompletionFunc) {
			if c.Flags().Lookup(flag) == nil {
				return
			}
			if _, ok := c.GetFlagCompletionFunc(flag); ok {
				return // the command's own
			}
			_ = c.RegisterFlagCompletionFunc(flag, fn) // errors only on an unknown flag, checked above
		}
		for flag, values := range fixed {
			register(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
		if c.Flags().Lookup("format") != nil {
			formats := importFormats
			if c.Name() == "report" {
				formats = []string{"md", "html"}
			}
			register("format", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
		}
		for flag, exts := range files {
			dir := cobra.ShellCompDirectiveDefault
			if len(exts) > 0 {
				dir = cobra.ShellCompDirectiveFilterFileExt
			}
			register(flag, cobra.FixedCompletions(exts, dir))
		}
		for _, flag := range dirs {
			register(flag, cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs))
		}
		for _, flag := range noFiles {
			register(flag, cobra.NoFileCompletions)
		}
		register("vs", cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs))
		if fn, ok := args[c.Name()]; ok && c.ValidArgsFunction == nil && c.Parent() == root {
			c.ValidArgsFunction = fn
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completionExamples adds cobra's completion commands now (not at Execute)
// and gives them their examples. They keep the writer root has now: set it
// first.
func completionExamples(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = `  knee completion bash > /etc/bash_completion.d/knee
  knee completion zsh > "${fpath[1]}/_knee"
  knee completion fish > ~/.config/fish/completions/knee.fish`
		for _, sh := range c.Commands() {
			if sh.Example == "" {
				sh.Example = "  knee completion " + sh.Name() + " > knee." + strings.ToLower(sh.Name())
			}
		}
	}
}
