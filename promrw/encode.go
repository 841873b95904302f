package promrw

import (
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// The remote-write 1.0 messages knee sends (prometheus.WriteRequest):
// field numbers as in Prometheus' prompb/types.proto and remote.proto.

// Label is one name="value" pair.
type Label struct{ Name, Value string }

// Series is one time series with either samples or native histograms.
type Series struct {
	Labels     []Label // sorted by name
	Samples    []Sample
	Histograms []Timed
}

// Sample is a float sample at a time in milliseconds since the epoch.
type Sample struct {
	Value float64
	MS    int64
}

// Timed is a native histogram at a time in milliseconds since the epoch.
type Timed struct {
	Native
	MS int64
}

// encodeWriteRequest is a WriteRequest {repeated TimeSeries timeseries = 1}.
func encodeWriteRequest(series []Series) []byte {
	var b []byte
	for _, s := range series {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, encodeSeries(s))
	}
	return b
}

// encodeSeries is a TimeSeries {labels = 1, samples = 2, histograms = 4}.
func encodeSeries(s Series) []byte {
	var b []byte
	for _, l := range s.Labels {
		var lb []byte
		lb = protowire.AppendTag(lb, 1, protowire.BytesType)
		lb = protowire.AppendString(lb, l.Name)
		lb = protowire.AppendTag(lb, 2, protowire.BytesType)
		lb = protowire.AppendString(lb, l.Value)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, lb)
	}
	for _, smp := range s.Samples {
		var sb []byte
		sb = protowire.AppendTag(sb, 1, protowire.Fixed64Type)
		sb = protowire.AppendFixed64(sb, math.Float64bits(smp.Value))
		sb = protowire.AppendTag(sb, 2, protowire.VarintType)
		sb = protowire.AppendVarint(sb, uint64(smp.MS))
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, sb)
	}
	for _, h := range s.Histograms {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, encodeHistogram(h))
	}
	return b
}

// encodeHistogram is an integer Histogram: count_int = 1, sum = 3,
// schema = 4 (sint32), zero_threshold = 5, zero_count_int = 6,
// positive_spans = 11, positive_deltas = 12 (sint64, each bucket's count
// minus the previous bucket's), reset_hint = 14, timestamp = 15.
func encodeHistogram(h Timed) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, h.Count)
	b = protowire.AppendTag(b, 3, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(h.Sum))
	b = protowire.AppendTag(b, 4, protowire.VarintType)
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(int64(h.Schema)))
	b = protowire.AppendTag(b, 5, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(0))
	b = protowire.AppendTag(b, 6, protowire.VarintType)
	b = protowire.AppendVarint(b, 0)
	idx := make([]int32, 0, len(h.Buckets))
	for i := range h.Buckets {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	// Spans: runs of consecutive indexes; a span's offset is the gap from
	// the previous span's end (the first's is its start index).
	var spans []byte
	var deltas []byte
	var prevCount int64
	next := int32(0)
	for k := 0; k < len(idx); {
		start := idx[k]
		n := 1
		for k+n < len(idx) && idx[k+n] == start+int32(n) {
			n++
		}
		var sp []byte
		sp = protowire.AppendTag(sp, 1, protowire.VarintType)
		sp = protowire.AppendVarint(sp, protowire.EncodeZigZag(int64(start-next)))
		sp = protowire.AppendTag(sp, 2, protowire.VarintType)
		sp = protowire.AppendVarint(sp, uint64(n))
		spans = protowire.AppendTag(spans, 11, protowire.BytesType)
		spans = protowire.AppendBytes(spans, sp)
		for j := range n {
			c := int64(h.Buckets[idx[k+j]])
			deltas = protowire.AppendVarint(deltas, protowire.EncodeZigZag(c-prevCount))
			prevCount = c
		}
		next = start + int32(n)
		k += n
	}
	b = append(b, spans...)
	if len(deltas) > 0 {
		b = protowire.AppendTag(b, 12, protowire.BytesType) // packed repeated sint64
		b = protowire.AppendBytes(b, deltas)
	}
	b = protowire.AppendTag(b, 14, protowire.VarintType)
	b = protowire.AppendVarint(b, 2) // NO: cumulative, never reset within a run
	b = protowire.AppendTag(b, 15, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(h.MS))
	return b
}
