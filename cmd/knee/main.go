// Command knee is a load tester whose numbers can be trusted: open and closed
// models, latency from the intended start, HdrHistograms merged never
// averaged, coordinated omission detected and corrected, the knee of the
// throughput-latency curve and the bottleneck found with the USE method.
package main

import (
	"os"

	"github.com/knee-dev/knee/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.OSEnv()))
}
