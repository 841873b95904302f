// Command schemagen writes the JSON Schema of every JSON file knee writes
// (cli.JSONOutputs) into a directory, generated from the Go types they are
// written from. Run it through go generate ./internal/cli; a test fails when
// the committed schemas differ from what it generates.
//
//	go run ./internal/cli/schemagen schema
package main

import (
	"fmt"
	"os"

	"github.com/knee-dev/knee/internal/cli/schemagen/gen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: schemagen DIR")
		os.Exit(2)
	}
	if err := gen.WriteAll(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
