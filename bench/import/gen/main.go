// Command gen writes a synthetic k6 CSV (`k6 run --out csv` layout, default
// timeFormat) of about the size asked, for the import benchmark. Every
// request writes the 13 rows k6 writes for an HTTP request; rows are in
// time order as k6 writes them.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/knee-dev/knee/k6metric"
)

func main() {
	out := flag.String("o", "k6.csv", "output file")
	sizeMB := flag.Int64("mb", 1024, "approximate size in MB")
	rate := flag.Int("rate", 2000, "requests per second of the simulated test")
	flag.Parse()
	if err := generate(*out, *sizeMB<<20, *rate); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

const header = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n"

var names = []string{"GET /books", "GET /books/{isbn}", "POST /orders", "GET /search?q=a,b"}

func generate(path string, size int64, rate int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	written, _ := w.WriteString(header)
	total := int64(written)
	buf := make([]byte, 0, 4096)
	var requests, errors5xx, transport int64
	for i := 0; total < size; i++ {
		ts := strconv.Itoa(1700000000 + i/rate)
		name := names[i%len(names)]
		if name[len(name)-1] == 'b' { // the name with a comma must be quoted
			name = `"` + name + `"`
		}
		status, expected, code := "200", "true", ""
		switch r := rng.IntN(1000); {
		case r < 5:
			status, expected, code = "500", "false", "1500"
			errors5xx++
		case r < 7:
			status, expected, code = "0", "false", "1212"
			transport++
		}
		dur := 1 + rng.ExpFloat64()*20 // ms
		tags := ",," + code + "," + expected + ",,GET," + name + ",HTTP/1.1,load,," + status + ",,," + name + ",,\n"
		buf = buf[:0]
		row := func(metric string, v float64) {
			buf = append(buf, metric...)
			buf = append(buf, ',')
			buf = append(buf, ts...)
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, v, 'f', 6, 64)
			buf = append(buf, ',')
			buf = append(buf, tags...)
		}
		row(k6metric.HTTPReqs, 1)
		row(k6metric.HTTPReqDuration, dur)
		row(k6metric.HTTPReqBlocked, 0.004)
		row(k6metric.HTTPReqConnecting, 0)
		row(k6metric.HTTPReqTLSHandshaking, 0)
		row(k6metric.HTTPReqSending, 0.02)
		row(k6metric.HTTPReqWaiting, dur-0.1)
		row(k6metric.HTTPReqReceiving, 0.08)
		row(k6metric.HTTPReqFailed, map[bool]float64{true: 0, false: 1}[expected == "true"])
		plain := ",,,,,,,,,load,,,,,,,\n"
		for _, m := range []struct {
			name string
			v    float64
		}{{k6metric.DataSent, 81}, {k6metric.DataReceived, 218}, {k6metric.IterationDuration, dur + 0.2}, {k6metric.Iterations, 1}} {
			buf = append(buf, m.name...)
			buf = append(buf, ',')
			buf = append(buf, ts...)
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, m.v, 'f', 6, 64)
			buf = append(buf, plain...)
		}
		n, err := w.Write(buf)
		if err != nil {
			return err
		}
		total += int64(n)
		requests++
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes, %d requests (%d 5xx, %d refused)\n", path, total, requests, errors5xx, transport)
	return f.Close()
}
