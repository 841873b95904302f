package cli

import "github.com/spf13/cobra"

func (a *app) labCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "lab",
		Short: "The article's experiments on a real sample target (the Bookstore API)",
	}
	return c
}
