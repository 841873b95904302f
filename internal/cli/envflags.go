package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// EnvPrefix starts the environment variable of every flag: --max-vus is
// KNEE_MAX_VUS.
const EnvPrefix = "KNEE_"

// envHelp is the root command's note on environment variables.
const envHelp = `Every flag can also be set by an environment variable: KNEE_ and the flag's
name in upper case with dashes as underscores (--max-vus: KNEE_MAX_VUS=2000,
--quiet: KNEE_QUIET=true). A flag given on the command line wins over its
variable; a variable counts as the flag given. A repeatable flag (--var,
--threshold, --header, ...) takes one value per line of its variable.`

// EnvName is the environment variable of the flag named flag.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag of c that the command line left alone from its
// KNEE_ variable, if that is set and not empty. A bad value is bad input
// naming the variable.
func applyEnv(c *cobra.Command, getenv func(string) string) error {
	if getenv == nil {
		return nil
	}
	var errs []error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "help" || f.Name == "version" {
			return
		}
		name := EnvName(f.Name)
		v := getenv(name)
		if v == "" {
			return
		}
		values := []string{v}
		if t := f.Value.Type(); t == "stringArray" {
			values = strings.Split(strings.TrimRight(v, "\n"), "\n")
		}
		for _, val := range values {
			if err := c.Flags().Set(f.Name, val); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q (the variable of --%s): %w", name, v, f.Name, err))
				return
			}
		}
	})
	return usageErr(errors.Join(errs...))
}
