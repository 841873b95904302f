// Command profiled is knee (the same CLI) that also, when PROFILE_DIR is
// set, appends its goroutine count and heap figures every SAMPLE_EVERY
// (default 10s) to PROFILE_DIR/runtime.tsv, and writes heap, goroutine and
// thread-creation profiles and the runtime's memory statistics at the times
// since its start listed in PROFILE_AT (e.g. "110s,400s"). It opens nothing
// on the network. bench/longrun.sh runs it to sample goroutines (which /proc
// cannot show) and, with PROFILE_AT, to find what a freeze leaves live:
//
//	MINUTES=4 FREEZE_EVERY=60 PROFILE_AT=55s,200s ./bench/longrun.sh
//	go tool pprof -sample_index=inuse_space -top bench/out/longrun/profiles/heap-200s.pb.gz
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/knee-dev/knee/internal/cli"
)

func main() {
	dir := os.Getenv("PROFILE_DIR")
	if dir != "" {
		every := 10 * time.Second
		if s := os.Getenv("SAMPLE_EVERY"); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				fmt.Fprintf(os.Stderr, "profiled: SAMPLE_EVERY: %q is not a positive duration (e.g. 10s)\n", s)
				os.Exit(2)
			}
			every = d
		}
		go sample(time.Now(), every, filepath.Join(dir, "runtime.tsv"))
	}
	if at := os.Getenv("PROFILE_AT"); at != "" {
		if dir == "" {
			dir = "."
		}
		var times []time.Duration
		for _, s := range strings.Split(at, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil || d <= 0 {
				fmt.Fprintf(os.Stderr, "profiled: PROFILE_AT: %q is not a positive duration (e.g. 110s)\n", s)
				os.Exit(2)
			}
			times = append(times, d)
		}
		// Sample every 4 KB allocated, not every 512 KB: retained
		// structures of a few hundred KB show up.
		runtime.MemProfileRate = 4096
		go profileAt(time.Now(), times, dir)
	}
	os.Exit(cli.Main(cli.OSEnv()))
}

// profileAt writes the profiles at each time since start.
func profileAt(start time.Time, times []time.Duration, dir string) {
	for _, d := range times {
		time.Sleep(time.Until(start.Add(d)))
		name := fmt.Sprintf("%ds", int(d.Seconds()))
		// A heap profile shows the heap as of the last GC; run one so it is current.
		runtime.GC()
		for _, p := range []string{"heap", "goroutine", "threadcreate"} {
			write(filepath.Join(dir, p+"-"+name+".pb.gz"), func(f *os.File) error {
				return pprof.Lookup(p).WriteTo(f, 0)
			})
		}
		write(filepath.Join(dir, "goroutines-"+name+".txt"), func(f *os.File) error {
			return pprof.Lookup("goroutine").WriteTo(f, 1)
		})
		write(filepath.Join(dir, "states-"+name+".txt"), writeStates)
		write(filepath.Join(dir, "memstats-"+name+".txt"), func(f *os.File) error {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			status, _ := os.ReadFile("/proc/self/status")
			var rss string
			for _, l := range strings.Split(string(status), "\n") {
				if strings.HasPrefix(l, "VmRSS:") || strings.HasPrefix(l, "RssAnon:") || strings.HasPrefix(l, "Threads:") {
					rss += l + "\n"
				}
			}
			mb := func(b uint64) float64 { return float64(b) / (1 << 20) }
			_, err := fmt.Fprintf(f, "%sgoroutines %d\nSys %.1f MB\nHeapAlloc %.1f MB\nHeapInuse %.1f MB\nHeapIdle %.1f MB\nHeapReleased %.1f MB\n"+
				"StackInuse %.1f MB\nStackSys %.1f MB\nMSpanInuse %.1f MB\nMSpanSys %.1f MB\nGCSys %.1f MB\nOtherSys %.1f MB\nNextGC %.1f MB\nNumGC %d\n",
				rss, runtime.NumGoroutine(), mb(m.Sys), mb(m.HeapAlloc), mb(m.HeapInuse), mb(m.HeapIdle), mb(m.HeapReleased),
				mb(m.StackInuse), mb(m.StackSys), mb(m.MSpanInuse), mb(m.MSpanSys), mb(m.GCSys), mb(m.OtherSys), mb(m.NextGC), m.NumGC)
			return err
		})
	}
}

// sample appends one line every period: seconds since start, goroutines,
// and the heap's in-use and released bytes (runtime/metrics: no
// stop-the-world, unlike ReadMemStats), flushed line by line.
func sample(start time.Time, every time.Duration, path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "profiled: %v\n", err)
		return
	}
	fmt.Fprintln(f, "t_s\tgoroutines\theap_inuse_mb\theap_released_mb")
	ms := []metrics.Sample{
		{Name: "/sched/goroutines:goroutines"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	mb := func(v uint64) float64 { return float64(v) / (1 << 20) }
	for t := time.NewTicker(every); ; <-t.C {
		metrics.Read(ms)
		fmt.Fprintf(f, "%d\t%d\t%.1f\t%.1f\n", int(time.Since(start).Seconds()), ms[0].Value.Uint64(),
			mb(ms[1].Value.Uint64()+ms[2].Value.Uint64()), mb(ms[3].Value.Uint64()))
	}
}

// writeStates counts goroutines by state ("IO wait", "syscall", "runnable",
// ...) and, for those in a system call, by the first function outside the
// runtime and syscall packages: which calls hold an OS thread.
func writeStates(f *os.File) error {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	states := map[string]int{}
	inSyscall := map[string]int{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, body, _ := strings.Cut(g, "\n")
		_, st, ok := strings.Cut(head, "[")
		if !ok {
			continue
		}
		st, _, _ = strings.Cut(st, "]")
		st, _, _ = strings.Cut(st, ",") // "IO wait, 2 minutes"
		states[st]++
		if st != "syscall" {
			continue
		}
		caller := "?"
		for _, l := range strings.Split(body, "\n") {
			if l == "" || l[0] == '\t' || strings.HasPrefix(l, "runtime.") || strings.HasPrefix(l, "syscall.") ||
				strings.HasPrefix(l, "internal/") || strings.HasPrefix(l, "golang.org/x/sys") {
				continue
			}
			caller, _, _ = strings.Cut(l, "(0x")
			break
		}
		inSyscall[caller]++
	}
	for st, n := range states {
		fmt.Fprintf(f, "state %q: %d\n", st, n)
	}
	for c, n := range inSyscall {
		fmt.Fprintf(f, "in a system call from %s: %d\n", c, n)
	}
	return nil
}

func write(path string, fn func(*os.File) error) {
	f, err := os.Create(path)
	if err == nil {
		err = fn(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "profiled: %v\n", err)
	}
}
