package record

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests hold knee's summary of a histogram (count, mean, min, max and
// percentiles, raw and corrected for coordinated omission) to HdrHistogram's
// Java implementation reading the same .hlog: testdata/HlogSummary.java,
// run with Debian's default-jdk-headless and libhdrhistogram-java (2.1.11),
// which scripts/test.sh installs. Its output for the generated inputs is
// also committed (testdata/java-summary.txt), so the comparison with Java's
// numbers runs where Java is absent too.

const (
	javaJar     = "/usr/share/java/hdrhistogram.jar"
	javaFixture = "testdata/java-summary.txt"
	// Set to 1 to rewrite javaFixture from Java's output (needs Java).
	javaUpdateEnv = "KNEE_UPDATE_JAVA_FIXTURE"
)

// javaPcts are the percentiles HlogSummary.java prints, in its order.
func javaPcts() []float64 { return []float64{0, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100} }

// javaInput is one generated log: values in µs from a fixed-seed PCG
// (integer arithmetic only, so every platform draws the same values).
type javaInput struct {
	name      string
	n         int
	intervals []int64 // expected intervals (µs) to correct with
	draw      func(r *rand.PCG) int64
}

func javaInputs() []javaInput {
	return []javaInput{
		// The run: 1,694 values, a sparse tail. 90 % 0.8-3 ms,
		// 10 % 3-28 ms and thinning out (the square of a uniform).
		{"sparse-1694", 1694, []int64{2000, 1337}, func(r *rand.PCG) int64 {
			if r.Uint64()%10 != 0 {
				return 800 + int64(r.Uint64()%2200)
			}
			u := int64(r.Uint64() % 1000)
			return 3000 + u*u/40
		}},
		// 1,000 values: every pct·N of 50, 90, 99 and 99.9 is a whole number,
		// where the one-ulp step down decides the rank.
		{"sparse-1000", 1000, []int64{5000}, func(r *rand.PCG) int64 {
			u := int64(r.Uint64() % 1000)
			return 500 + u*u/50
		}},
		// 200,000 values: 99 % 0.2-5.2 ms, 1 % up to 0.5 s.
		{"dense-200000", 200000, []int64{1000}, func(r *rand.PCG) int64 {
			if r.Uint64()%100 != 0 {
				return 200 + int64(r.Uint64()%5000)
			}
			u := int64(r.Uint64() % 10000)
			return 5000 + u*u/200
		}},
	}
}

// write logs in's values through knee's LogWriter (500 values an
// interval) and returns the log's path and a digest of the values.
func (in javaInput) write(t *testing.T) (string, string) {
	t.Helper()
	r := rand.NewPCG(20261202, uint64(in.n))
	var buf bytes.Buffer
	lw, err := NewLogWriter(&buf, time.UnixMilli(1764633600000), "knee java_test "+in.name)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.New()
	h := NewHistogram()
	flush := func(i int) {
		if err := lw.WriteInterval(Key{Latency, "s", "get"}.Tag(), time.Duration(i)*time.Second, time.Second, h); err != nil {
			t.Fatal(err)
		}
		h.Reset()
	}
	for i := range in.n {
		v := in.draw(r)
		digest.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
		h.Record(time.Duration(v) * time.Microsecond)
		if (i+1)%500 == 0 {
			flush(i / 500)
		}
	}
	if h.Count() > 0 {
		flush(in.n / 500)
	}
	path := filepath.Join(t.TempDir(), in.name+".hlog")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, hex.EncodeToString(digest.Sum(nil))
}

// readLogSum reads a log with knee's LogReader and merges every interval.
func readLogSum(t *testing.T, path string, unitNanos float64) *Histogram {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr := NewLogReader(f, filepath.Base(path), unitNanos)
	sum := NewHistogram()
	for {
		iv, err := lr.Next()
		if err == io.EOF {
			return sum
		}
		if err != nil {
			t.Fatal(err)
		}
		sum.Merge(iv.Histogram)
	}
}

// javaLine is one line of HlogSummary's output: its name and its fields.
type javaLine struct {
	name   string
	fields map[string]string
}

func parseJavaLines(t *testing.T, text string) []javaLine {
	t.Helper()
	var out []javaLine
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		l := javaLine{name: words[0], fields: map[string]string{}}
		for _, w := range words[1:] {
			k, v, ok := strings.Cut(w, "=")
			if !ok {
				t.Fatalf("Java output %q: field %q is not key=value", line, w)
			}
			l.fields[k] = v
		}
		out = append(out, l)
	}
	return out
}

// compareWithJava checks knee's summary of raw, and of raw corrected with
// each of intervals, against Java's lines for the same log.
func compareWithJava(t *testing.T, what string, raw *Histogram, intervals []int64, java []javaLine) {
	t.Helper()
	if len(java) != 1+len(intervals) {
		t.Fatalf("%s: %d lines from Java, want %d", what, len(java), 1+len(intervals))
	}
	for i, jl := range java {
		h, name := raw, "raw"
		if i > 0 {
			h, name = raw.Corrected(time.Duration(intervals[i-1])*time.Microsecond), fmt.Sprintf("corrected=%d", intervals[i-1])
		}
		if jl.name != name {
			t.Fatalf("%s: Java line %d is %q, want %q", what, i, jl.name, name)
		}
		num := func(key string) int64 {
			v, err := strconv.ParseInt(jl.fields[key], 10, 64)
			if err != nil {
				t.Fatalf("%s %s: Java's %s = %q: %v", what, name, key, jl.fields[key], err)
			}
			return v
		}
		us := func(key string) time.Duration { return time.Duration(num(key)) * time.Microsecond }
		if got, want := h.Count(), num("count"); got != want {
			t.Errorf("%s %s: count %d, Java %d", what, name, got, want)
		}
		bits, err := strconv.ParseUint(jl.fields["meanbits"], 16, 64)
		if err != nil {
			t.Fatalf("%s %s: Java's meanbits %q: %v", what, name, jl.fields["meanbits"], err)
		}
		javaMean := math.Float64frombits(bits)
		if got := h.meanMicros(); got != javaMean {
			t.Errorf("%s %s: mean %v µs, Java %v µs", what, name, got, javaMean)
		}
		if got, want := h.Mean(), time.Duration(math.Round(javaMean*1000)); got != want {
			t.Errorf("%s %s: Mean() %v, Java's mean to the ns %v", what, name, got, want)
		}
		if got, want := h.Min(), us("min"); got != want {
			t.Errorf("%s %s: min %v, Java %v", what, name, got, want)
		}
		if got, want := h.Max(), us("max"); got != want {
			t.Errorf("%s %s: max %v, Java %v", what, name, got, want)
		}
		for _, p := range javaPcts() {
			key := "p" + strconv.FormatFloat(p, 'f', -1, 64)
			if got, want := h.Percentile(p), us(key); got != want {
				t.Errorf("%s %s: %s %v, Java %v", what, name, key, got, want)
			}
		}
		l := h.Latencies()
		for _, c := range []struct {
			key string
			got float64
		}{{"p50", l.P50}, {"p90", l.P90}, {"p95", l.P95}, {"p99", l.P99}, {"p99.9", l.P999}, {"max", l.Max}, {"min", l.Min}} {
			if want := float64(us(c.key)) / float64(time.Millisecond); c.got != want {
				t.Errorf("%s %s: Latencies %s %v ms, Java %v ms", what, name, c.key, c.got, want)
			}
		}
	}
}

// javaRunner compiles HlogSummary.java and returns a function running it,
// or skips the test, saying why, when Java or the jar is missing.
func javaRunner(t *testing.T) func(path string, unitNanos int64, intervals []int64) string {
	t.Helper()
	javac, err1 := exec.LookPath("javac")
	java, err2 := exec.LookPath("java")
	_, err3 := os.Stat(javaJar)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Skipf("SKIP: HdrHistogram's Java implementation is not installed (%v): install default-jdk-headless "+
			"and libhdrhistogram-java (scripts/test.sh does); knee is still compared with the committed %s", err, javaFixture)
	}
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-cp", javaJar, "-d", classes, "testdata/HlogSummary.java").CombinedOutput(); err != nil {
		t.Fatalf("javac testdata/HlogSummary.java: %v\n%s", err, out)
	}
	return func(path string, unitNanos int64, intervals []int64) string {
		args := []string{"-cp", classes + string(os.PathListSeparator) + javaJar, "HlogSummary", path, strconv.FormatInt(unitNanos, 10)}
		for _, iv := range intervals {
			args = append(args, strconv.FormatInt(iv, 10))
		}
		var stderr bytes.Buffer
		cmd := exec.Command(java, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("java HlogSummary %s: %v\n%s", path, err, stderr.String())
		}
		return string(out)
	}
}

// TestSummaryMatchesJava runs HdrHistogram's Java implementation over logs
// knee wrote (sparse and dense, raw and corrected) and over jHiccup's log,
// and checks knee's numbers equal Java's exactly. It also checks the
// committed fixture is Java's output, or rewrites it with
// KNEE_UPDATE_JAVA_FIXTURE=1.
func TestSummaryMatchesJava(t *testing.T) {
	run := javaRunner(t)
	var fixture strings.Builder
	for _, in := range javaInputs() {
		path, digest := in.write(t)
		out := run(path, 1000, in.intervals)
		compareWithJava(t, in.name, readLogSum(t, path, 1000), in.intervals, parseJavaLines(t, out))
		fmt.Fprintf(&fixture, "input %s values=%s\n%s", in.name, digest, out)
	}
	if os.Getenv(javaUpdateEnv) == "1" {
		if err := os.WriteFile(javaFixture, []byte(fixture.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s from Java's output", javaFixture)
	} else if have, err := os.ReadFile(javaFixture); err != nil || withoutDecimalMean(string(have)) != withoutDecimalMean(fixture.String()) {
		t.Errorf("%s is not Java's output for the generated inputs (%v); rerun with %s=1 and review the diff:\n%s",
			javaFixture, err, javaUpdateEnv, fixture.String())
	}

	// jHiccup's own log, nanoseconds with another geometry: Java converts it
	// to microseconds bucket by bucket, as knee's LogReader does.
	jh := filepath.Join("..", "..", "shared", "testdata", "hdrhistogram", "jHiccup-2.0.7S.logV3.hlog")
	if _, err := os.Stat(jh); errors.Is(err, os.ErrNotExist) {
		t.Skipf("SKIP (partly): %s is missing: ../shared is not beside this checkout; knee's own logs were compared", jh)
	}
	intervals := []int64{1000, 20000}
	compareWithJava(t, "jHiccup", readLogSum(t, jh, 1), intervals, parseJavaLines(t, run(jh, 1, intervals)))
}

// withoutDecimalMean drops the mean's decimal form, which Java versions
// print differently (JDK 19 changed Double.toString); its bits stay.
func withoutDecimalMean(text string) string {
	return regexp.MustCompile(` mean=[^ ]+`).ReplaceAllString(text, "")
}

// TestSummaryMatchesJavaFixture compares knee with Java's committed output
// for the generated inputs: Java's numbers, not knee's, where Java is absent.
func TestSummaryMatchesJavaFixture(t *testing.T) {
	f, err := os.Open(javaFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blocks := map[string][2]string{} // input name: digest, Java's lines
	var name string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "input "); ok {
			n, digest, _ := strings.Cut(rest, " values=")
			name = n
			blocks[name] = [2]string{digest, ""}
			continue
		}
		b := blocks[name]
		b[1] += line + "\n"
		blocks[name] = b
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, in := range javaInputs() {
		b, ok := blocks[in.name]
		if !ok {
			t.Errorf("%s has no input %s; rerun TestSummaryMatchesJava with %s=1", javaFixture, in.name, javaUpdateEnv)
			continue
		}
		path, digest := in.write(t)
		if digest != b[0] {
			t.Errorf("%s: the generated values differ from those Java read (digest %s, fixture %s); rerun "+
				"TestSummaryMatchesJava with %s=1", in.name, digest, b[0], javaUpdateEnv)
			continue
		}
		compareWithJava(t, in.name, readLogSum(t, path, 1000), in.intervals, parseJavaLines(t, b[1]))
	}
}
