package cli

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"
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
			share, err := pageTail(p, calls)
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

// pageTail is 1-(1-p)^n, computed as -expm1(n*log1p(-p)) to stay exact for tiny p.
func pageTail(p float64, n int) (float64, error) {
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("--p %g: must be a probability between 0 and 1 exclusive (e.g. 0.01)", p)
	}
	if n < 1 {
		return 0, fmt.Errorf("--calls %d: must be at least 1", n)
	}
	return -math.Expm1(float64(n) * math.Log1p(-p)), nil
}
