package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/knee-dev/knee/guard"
)

// Services knee opens listen on loopback unless told otherwise: knee lab
// serve's --addr, and every other command's listen-address flag (a
// dashboard's or a metrics endpoint's, as they are added, also the address
// a flag takes when given without a value), default to a loopback address.
// Values without a colon (true, false) are not addresses.
func TestListenAddressesDefaultToLoopback(t *testing.T) {
	a := &app{env: Env{Getenv: func(string) string { return "" }}}
	root := a.rootCommand()
	found := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			n := strings.ToLower(f.Name)
			if strings.Contains(n, "addr") || strings.Contains(n, "listen") || strings.HasSuffix(n, "-bind") || strings.Contains(n, "dashboard") {
				found[c.CommandPath()+" --"+f.Name] = f.DefValue
				if f.NoOptDefVal != "" { // --dashboard given without a value
					found[c.CommandPath()+" --"+f.Name+" (no value)"] = f.NoOptDefVal
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if def, ok := found["knee lab serve --addr"]; !ok || def != "127.0.0.1:5080" {
		t.Errorf("knee lab serve --addr defaults to %q (found %v), want 127.0.0.1:5080", def, ok)
	}
	for flag, def := range found {
		if strings.Contains(def, ":") && !guard.IsLoopback(def) {
			t.Errorf("%s defaults to %q, which is not a loopback address", flag, def)
		}
	}
	t.Logf("listen flags: %v", found)
}
