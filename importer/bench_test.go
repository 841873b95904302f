package importer

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// discardSink drops what an import writes, so a benchmark measures reading.
type discardSink struct{}

func (discardSink) open(rundir.Meta) error { return nil }
func (discardSink) write(record.IntervalSnapshot, map[string]rundir.IntervalCounters) error {
	return nil
}
func (discardSink) close(rundir.Meta) error { return nil }

// k6BenchCSV is n seconds of k6 --out csv at 500 requests/s, 13 rows per
// request as k6 writes them, one request name quoted for its comma.
func k6BenchCSV(seconds int) []byte {
	var b bytes.Buffer
	b.WriteString("metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n")
	names := []string{"GET /books", "GET /books/{isbn}", `"POST /cart, add"`, "GET /"}
	metrics := []string{"http_reqs", "http_req_duration", "http_req_blocked", "http_req_connecting",
		"http_req_tls_handshaking", "http_req_sending", "http_req_waiting", "http_req_receiving", "http_req_failed"}
	for s := range seconds {
		for r := range 500 {
			ts, name := 1700000000+s, names[r%len(names)]
			for _, m := range metrics {
				fmt.Fprintf(&b, "%s,%d,%d.%06d,,,,true,,GET,%s,HTTP/1.1,load,,200,,,%s,,\n", m, ts, 1+r%97, r*7919%1000000, name, name)
			}
			for _, m := range []string{"data_sent", "data_received", "iteration_duration", "iterations"} {
				fmt.Fprintf(&b, "%s,%d,%d.000000,,,,,,,,,load,,,,,,,\n", m, ts, 80+r%200)
			}
		}
	}
	return b.Bytes()
}

func BenchmarkImportK6CSV(b *testing.B) {
	data := k6BenchCSV(20)
	opt, err := Options{Format: FormatK6CSV}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := importFrom(context.Background(), bytes.NewReader(data), "bench.csv", time.Time{}, opt, discardSink{}); err != nil {
			b.Fatal(err)
		}
	}
}
