package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/analyze"
)

// tailCommand answers the article's question: with n calls per page, each slow
// with probability p, how many pages see at least one slow call?
func (a *app) tailCommand() *cobra.Command {
	var p float64
	var calls int
	c := &cobra.Command{
		Use:   "tail",
		Short: "Share of pages with at least one slow call: 1-(1-p)^n",
		Long: `With n calls per page, each slow with probability p (p = 0.01 for "slower
than p99"), the share of pages that contain at least one slow call is 1-(1-p)^n.
p99 is not "one user in a hundred has a problem".`,
		Example: "  knee tail --p 0.01 --calls 20   # 18.2 % of pages",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			share, err := analyze.PageTail(p, calls)
			if err != nil {
				return usageErr(err)
			}
			fmt.Fprintf(a.env.Stdout, "%d calls per page, each slow with p=%g: %.1f %% of pages have at least one slow call (1-(1-p)^n = %.4f)\n",
				calls, p, share*100, share)
			return nil
		},
	}
	c.Flags().Float64Var(&p, "p", 0.01, "probability that one call is slow (0 < p < 1; 0.01 for p99)")
	c.Flags().IntVar(&calls, "calls", 20, "calls per page (n >= 1)")
	return c
}
