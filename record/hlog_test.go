package record

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// (a) A log knee writes reads back in hdrhistogram-go's own reader with the
// same counts and percentiles, and in knee's reader with the same tags and times.
func TestLogWriterInterop(t *testing.T) {
	var buf bytes.Buffer
	start := time.UnixMilli(1441812279474)
	lw, err := NewLogWriter(&buf, start, "knee test\nsecond line")
	if err != nil {
		t.Fatal(err)
	}
	var hs []*Histogram
	keys := []Key{{Latency, "s", "get"}, {Service, "s x", "a,b"}}
	for i := range 3 {
		for j, k := range keys {
			h := NewHistogram()
			for v := 1; v <= 1000*(i+1); v++ {
				h.Record(time.Duration(v*(j+1)) * 100 * time.Microsecond)
			}
			hs = append(hs, h)
			if err := lw.WriteInterval(k.Tag(), time.Duration(i)*time.Second, time.Second, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	text := buf.String()
	for _, want := range []string{"#[Histogram log format version 1.3]\n#knee test\n#second line\n#[StartTime: 1441812279.474 (seconds since epoch), 2015-09-09T15:24:39.474Z]\n#[BaseTime: 1441812279.474 (seconds since epoch)]\n\"StartTimestamp\"", "\nTag=service|s%20x|a%2Cb,1.000,1.000,"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}

	ref := hdrhistogram.NewHistogramLogReader(bytes.NewReader(buf.Bytes()))
	for i, h := range hs {
		got, err := ref.NextIntervalHistogram()
		if err != nil || got == nil {
			t.Fatalf("hdrhistogram-go interval %d: %v, %v", i, got, err)
		}
		if got.TotalCount() != h.Count() {
			t.Errorf("interval %d: count %d, want %d", i, got.TotalCount(), h.Count())
		}
		// Every pct·N here is a whole number, where hdrhistogram-go's rank
		// (rounded) and knee's nearest rank agree.
		for _, pct := range []float64{50, 99, 99.9, 100} {
			if us := got.ValueAtPercentile(pct); time.Duration(us)*time.Microsecond != h.Percentile(pct) {
				t.Errorf("interval %d p%v: hdrhistogram-go %d µs, knee %v", i, pct, us, h.Percentile(pct))
			}
		}
	}

	lr := NewLogReader(bytes.NewReader(buf.Bytes()), "knee.hlog", 1000)
	for i, h := range hs {
		iv, err := lr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ParseTag(iv.Tag) != keys[i%2] || iv.Start != time.Duration(i/2)*time.Second || iv.Length != time.Second {
			t.Errorf("interval %d: tag %q start %v length %v", i, iv.Tag, iv.Start, iv.Length)
		}
		if !iv.Histogram.view().Equals(h.h) {
			t.Errorf("interval %d: histogram differs after the round trip", i)
		}
	}
	if _, err := lr.Next(); err != io.EOF {
		t.Errorf("after the last interval: %v, want io.EOF", err)
	}
	hdr := lr.Header()
	if hdr.Version != "1.3" || !hdr.StartTime.Equal(start) || !hdr.BaseTime.Equal(start) || len(hdr.Comments) != 2 {
		t.Errorf("header = %+v", hdr)
	}
}

// modTestdata is the test directory of the hdrhistogram-go module go.mod
// requires, wherever the module cache keeps it.
func modTestdata(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/HdrHistogram/hdrhistogram-go").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("go list -m -f {{.Dir}} github.com/HdrHistogram/hdrhistogram-go: %v (run go mod download)", err)
	}
	return filepath.Join(dir, "test")
}

// (b) Logs from Java and C writers, with the counts, p99.9 and max that
// HdrHistogram's Java HistogramLogReaderWriterTest and HdrHistogram_c's
// hdr_histogram_log_test assert (values in the logs' raw units).
func TestLogReaderReferenceLogs(t *testing.T) {
	mod := modTestdata(t)
	tests := []struct {
		file      string
		unitNanos float64
		from, to  float64 // Java nextIntervalHistogram(from, to) range, in s; to < 0: all
		intervals int
		total     int64
		p999, max int64 // raw units
		startSec  float64
	}{
		{"jHiccup-2.0.7S.logV2.hlog", 1, 0, -1, 62, 48761, 1745879039, 1796210687, 1441812279.474},
		{"jHiccup-2.0.7S.logV2.hlog", 1, 5, 20, 15, 11664, 1536163839, 1544552447, 1441812279.474},
		{"jHiccup-2.0.7S.logV2.hlog", 1, 40, 60, 20, 15830, 1779433471, 1796210687, 1441812279.474},
		{"jHiccup-2.0.6.logV1.hlog", 1, 0, -1, 88, 65964, 1829765119, 1888485375, 1438867590.285},
		{"jHiccup-2.0.6.logV1.hlog", 1, 5, 20, 15, 11213, 1019740159, 1032323071, 1438867590.285},
		{"jHiccup-2.0.6.logV1.hlog", 1, 50, 80, 29, 22630, 1871708159, 1888485375, 1438867590.285},
		{"jHiccup-2.0.1.logV0.hlog", 1, 0, -1, 81, 61256, 1510998015, 1569718271, 1438869961.225},
		{"jHiccup-2.0.1.logV0.hlog", 1, 20, 45, 25, 18492, 459007, 623103, 1438869961.225},
		{"jHiccup-2.0.1.logV0.hlog", 1, 46, 80, 34, 25439, 1209008127, 1234173951, 1438869961.225},
		{"ycsb.logV1.hlog", 1000, 0, -1, 602, 300056, 1214463, 1546239, 1438613579.295},
		{"ycsb.logV1.hlog", 1000, 0, 180, 180, 90033, 1375231, 1546239, 1438613579.295},
		{"ycsb.logV1.hlog", 1000, 180, 700, 421, 209686, 530, 17775, 1438613579.295},
		{"../shared/testdata/hdrhistogram/jHiccup-2.0.7S.logV3.hlog", 1, 0, -1, 62, 48761, 1745879039, 1796210687, 1441812279.474},
	}
	var missing []string
	for _, tt := range tests {
		path := filepath.Join(mod, tt.file)
		if strings.HasPrefix(tt.file, "..") {
			path = filepath.Join("..", tt.file)
			// Interop data from ../shared, beside the checkout in CI only.
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				missing = append(missing, path)
				continue
			}
		}
		f, err := os.Open(path)
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		lr := NewLogReader(f, filepath.Base(path), tt.unitNanos)
		acc := NewHistogram()
		var n int
		var total int64
		for {
			iv, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.file, err)
			}
			s := iv.Start.Seconds()
			if tt.to >= 0 && (s < tt.from || s > tt.to) {
				continue
			}
			n++
			total += iv.Histogram.Count()
			acc.Merge(iv.Histogram)
		}
		f.Close()
		if n != tt.intervals || total != tt.total {
			t.Errorf("%s [%v,%v]: %d intervals, %d values; want %d, %d", tt.file, tt.from, tt.to, n, total, tt.intervals, tt.total)
		}
		unit := time.Duration(tt.unitNanos)
		within(t, tt.file+" p99.9", acc.Percentile(99.9), time.Duration(tt.p999)*unit, 0.005)
		within(t, tt.file+" max", acc.Max(), time.Duration(tt.max)*unit, 0.005)
		if got := lr.Header().StartTime; !got.Equal(epoch(tt.startSec)) {
			t.Errorf("%s: start %v, want %v", tt.file, got, epoch(tt.startSec))
		}
	}
	if len(missing) > 0 {
		t.Skipf("SKIP (partly): interop file %s is missing: ../shared is not beside this checkout; the other logs were checked", strings.Join(missing, ", "))
	}
}

// Absolute timestamps (no BaseTime, close to StartTime) give offsets from
// StartTime; relative ones (no BaseTime, far below it) are offsets already.
func TestLogReaderTimestamps(t *testing.T) {
	h := NewHistogram()
	h.Record(time.Millisecond)
	var pb bytes.Buffer
	if err := (&LogWriter{w: &pb}).WriteInterval("", 0, 0, h); err != nil {
		t.Fatal(err)
	}
	payload := strings.Split(strings.TrimSpace(pb.String()), ",")[3]
	tests := []struct {
		name, log string
		start     time.Duration
	}{
		{"absolute", "#[StartTime: 1000.000 (seconds since epoch)]\n1002.500,1.000,1.0," + payload + "\n", 2500 * time.Millisecond},
		{"relative", "#[StartTime: 100000000.000 (seconds since epoch)]\n2.500,1.000,1.0," + payload + "\n", 2500 * time.Millisecond},
		{"base time", "#[StartTime: 1000.000]\n#[BaseTime: 1001.000]\n2.500,1.000,1.0," + payload + "\n", 3500 * time.Millisecond},
		{"no header", "7.000,1.000,1.0," + payload + "\n8.000,1.000,1.0," + payload, 0},
	}
	for _, tt := range tests {
		iv, err := NewLogReader(strings.NewReader(tt.log), tt.name, 1000).Next()
		if err != nil || iv.Start != tt.start || iv.Length != time.Second || iv.Histogram.Count() != 1 {
			t.Errorf("%s: start %v length %v err %v; want start %v", tt.name, iv.Start, iv.Length, err, tt.start)
		}
	}
}

// (c) Corrupt or truncated lines are errors naming the file and line.
func TestLogReaderErrors(t *testing.T) {
	good := "#[Histogram log format version 1.3]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
	tests := []struct {
		name, log, want string
	}{
		// Each ends in a newline: a whole line that is wrong, not a torn last one.
		{"truncated line", good + "0.000,1.000\n", "t.hlog:3: interval line has 2 fields"},
		{"bad base64", good + "0.000,1.000,1.0,HIST!!!!\n", "t.hlog:3: bad base64 payload"},
		{"truncated payload", good + "\n\n0.000,1.000,1.0,HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZ\n", "t.hlog:5: bad base64 payload"},
		{"bad timestamp", good + "x,1.000,1.0,HISTFAAA\n", "t.hlog:3: bad start timestamp"},
		{"bad start time", "#[StartTime: soon]\n", "t.hlog:1: bad StartTime"},
		{"tag only", "Tag=abc\n", "t.hlog:1: tag without fields"},
	}
	for _, tt := range tests {
		lr := NewLogReader(strings.NewReader(tt.log), "t.hlog", 1000)
		_, err := lr.Next()
		var le *LineError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &le) || !strings.Contains(err.Error(), "(fix: ") {
			t.Errorf("%s: error %v, want one containing %q and a fix", tt.name, err, tt.want)
		}
		if _, again := lr.Next(); again != err {
			t.Errorf("%s: second Next returned %v, want the same error", tt.name, again)
		}
	}
}

// TestLogReaderTornLastLine: a last line cut short without its newline (a
// full disk, a killed writer) is dropped and reported by Torn; the intervals
// before it are read (a whole bad line stays an error: TestLogReaderErrors).
func TestLogReaderTornLastLine(t *testing.T) {
	var buf bytes.Buffer
	lw, err := NewLogWriter(&buf, time.Unix(1000, 0), "")
	if err != nil {
		t.Fatal(err)
	}
	h := NewHistogram()
	h.Record(3 * time.Millisecond)
	for i := range 2 {
		if err := lw.WriteInterval("", time.Duration(i)*time.Second, time.Second, h); err != nil {
			t.Fatal(err)
		}
	}
	whole := buf.String()
	last := strings.LastIndex(strings.TrimSuffix(whole, "\n"), "\n") + 1
	for _, cut := range []int{last + 1, last + 8, len(whole) - 10} {
		lr := NewLogReader(strings.NewReader(whole[:cut]), "t.hlog", 1000)
		var n int
		for {
			iv, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("cut at %d of %d: %v, want the torn line dropped", cut, len(whole), err)
			}
			if iv.Start != 0 || iv.Histogram.Count() != 1 {
				t.Errorf("cut at %d: interval at %v with %d values, want 0 s with 1", cut, iv.Start, iv.Histogram.Count())
			}
			n++
		}
		if n != 1 || !lr.Torn() {
			t.Errorf("cut at %d: %d intervals, torn %v; want 1 and true", cut, n, lr.Torn())
		}
	}
	lr := NewLogReader(strings.NewReader(whole), "t.hlog", 1000)
	for {
		if _, err := lr.Next(); err != nil {
			break
		}
	}
	if lr.Torn() {
		t.Error("a whole log reported torn")
	}
}

func TestLogWriterRejectsSplittingTag(t *testing.T) {
	lw := &LogWriter{w: io.Discard}
	if err := lw.WriteInterval("a b", 0, time.Second, NewHistogram()); err == nil {
		t.Error("tag with a space accepted")
	}
}

func FuzzLogReader(f *testing.F) {
	f.Add([]byte("#[StartTime: 1441812279.474 (seconds since epoch)]\nTag=A,0.127,1.007,2.769,HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZMQ4uASkhIR4nrxg9v2lMaxhvMekILGZkKmcCAEf2CsI=\n"))
	f.Add([]byte("0.116,1.005,3.031,HISTiQAAAG542pNpmdzBwMDAxAAGfgoMDMxuBjsWQLgMTI+gDFYozQmlOaA0M5Rmg9LsUJoFjc+GZg4rmjkwdUxofG4obQeldaG0LJTmR1PvCKXVIRQjzL2BUFoYTT0jwyjABkbDZTSeR8FofI+CEQ4AUBEGxA==\n"))
	f.Add([]byte("0.133,1.005,2.802,HISTIgAAAFd42pNpmazIwMAYxgABTBDKT4GBgdnNYMcCBvsPUBkeBkYGZqA8MwMbAzsDC5DFBCTZgJCDQY1BjkGLQZRBlUEPCB8zWDCYMxgDZZkZhgJgHDibAY8JB/A=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lr := NewLogReader(bytes.NewReader(data), "fuzz.hlog", 1)
		for range 1000 {
			iv, err := lr.Next()
			if err != nil {
				return
			}
			if iv.Histogram == nil || iv.Histogram.Count() < 0 {
				t.Fatalf("interval without a valid histogram: %+v", iv)
			}
		}
	})
}
