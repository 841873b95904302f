// Command importbench times importer.Import on one file and prints the
// throughput, the request counts and the peak RSS, for bench/import/run.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/knee-dev/knee/importer"
)

func main() {
	out := flag.String("out", "", "run directory to write (must not exist)")
	prof := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if flag.NArg() != 1 || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: importbench -out DIR FILE")
		os.Exit(2)
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "importbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := bench(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func bench(path, out string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := importer.Import(context.Background(), path, out, importer.Options{})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	c := res.Meta.Counters
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	mb := float64(fi.Size()) / 1e6
	// CPU seconds too: on a shared machine the wall clock also counts waiting for a core.
	fmt.Printf("knee import: %.1f MB in %.2f s wall = %.1f MB/s; %.2f CPU s = %.1f MB/CPU-s; peak RSS %.1f MB\n",
		mb, secs, mb/secs, cpu, mb/cpu, float64(ru.Maxrss)/1024)
	fmt.Printf("requests %d errors %d by status %v by class %v\n", c.Requests, c.Errors, c.ByStatus, nonZero(c.ErrorsByClass))
	return nil
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
