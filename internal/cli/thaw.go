package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/fault"
)

func (a *app) thawCommand() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "thaw",
		Short: "Thaw every target a killed knee left frozen",
		Long: `Before knee freezes a target it notes it in a state file; after the thaw it
removes the note. If knee was killed (kill -9) in between, 'knee thaw' thaws
every noted target whose knee is gone.`,
		Example: "  knee thaw\n  knee thaw --state-dir /var/tmp/knee-state",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if dir == "" {
				d, err := fault.DefaultStateDir(a.env.Getenv)
				if err != nil {
					return err
				}
				dir = d
			}
			res, err := fault.ThawAll(dir)
			for _, r := range res {
				line := fmt.Sprintf("%s: %s", r.Entry, r.Action)
				if r.Err != nil {
					line += fmt.Sprintf(" (failed: %v; run knee thaw again)", r.Err)
				}
				fmt.Fprintln(a.env.Stdout, line)
			}
			if len(res) == 0 && err == nil {
				fmt.Fprintf(a.env.Stdout, "nothing frozen (state in %s)\n", dir)
			}
			return err
		},
	}
	c.Flags().StringVar(&dir, "state-dir", "", "where knee notes frozen targets (default $XDG_STATE_HOME/knee)")
	return c
}
