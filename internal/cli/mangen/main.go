// Command mangen writes knee's man pages (section 1, one per command) from
// its cobra command tree (cobra/doc) into a directory. make man runs it.
//
//	go run ./internal/cli/mangen man/man1
//
// The pages' date is SOURCE_DATE_EPOCH when set (reproducible builds), else
// today.
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra/doc"

	"github.com/knee-dev/knee/internal/cli"
	"github.com/knee-dev/knee/internal/version"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mangen DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Getenv("SOURCE_DATE_EPOCH")); err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
}

func run(dir, epoch string) error {
	date := time.Now()
	if epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", epoch, err)
		}
		date = time.Unix(sec, 0).UTC()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root := cli.Command(cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }})
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{
		Title:   "KNEE",
		Section: "1",
		Date:    &date,
		Source:  "knee " + version.Version,
		Manual:  "knee manual",
	}
	return doc.GenManTree(root, header, dir)
}
