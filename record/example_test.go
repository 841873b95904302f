package record_test

import (
	"fmt"
	"time"

	"github.com/knee-dev/knee/record"
)

// A percentile is the nearest rank, read at the top of its bucket (three
// significant digits): 10 ms lies in an 8 µs-wide bucket, 10.000–10.007 ms.
func ExampleHistogram_Percentile() {
	h := record.NewHistogram()
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Millisecond / 10) // 0.1 ms .. 10 ms
	}
	// p50 is the 50th value, 5 ms (a 4 µs bucket: 5.000–5.003 ms); p99 the
	// 99th, 9.9 ms (an 8 µs bucket: 9.896–9.903 ms).
	fmt.Println(h.Count(), h.Percentile(50), h.Percentile(99), h.Max())
	// Output: 100 5.003ms 9.903ms 10.007ms
}

// Percentiles do not average: the p99 of two runners is the p99 of their
// histograms added, not the mean of their p99s.
func ExampleHistogram_Merge() {
	fast, slow := record.NewHistogram(), record.NewHistogram()
	for range 990 {
		fast.Record(time.Millisecond)
	}
	for range 10 {
		slow.Record(time.Second)
	}
	for range 90 {
		slow.Record(time.Millisecond)
	}
	all := fast.Clone()
	all.Merge(slow)
	// 1,090 requests, 10 of them 1 s: rank ceil(0.99 × 1,090) = 1,080 is
	// still 1 ms. The runners' p99s, 1 ms and 1 s (its 512 µs bucket's top,
	// 1,000.447 ms), average to 500.7235 ms: a number no request had.
	fmt.Println(all.Count(), all.Percentile(99), (fast.Percentile(99)+slow.Percentile(99))/2)
	// Output: 1090 1ms 500.7235ms
}

// A closed-model VU that sends every 100 ms and waits 1 s for one response
// missed the nine requests it would have sent meanwhile: RecordCorrected
// adds them as HdrHistogram does (900, 800, …, 100 ms).
func ExampleHistogram_RecordCorrected() {
	h := record.NewHistogram()
	for range 99 {
		h.Record(10 * time.Millisecond)
	}
	h.RecordCorrected(time.Second, 100*time.Millisecond)
	// 109 values: 99 of 10 ms, then 100, 200, …, 1,000 ms. p99 is rank
	// ceil(0.99 × 109) = 108: 900 ms, in a 512 µs bucket (899.584–900.095 ms).
	fmt.Println(h.Count(), h.Percentile(50), h.Percentile(99))
	// Output: 109 10.007ms 900.095ms
}
