#!/usr/bin/env python3
"""Reference for the import benchmark: the same counts as `knee import`,
computed with Python's csv module (requests, errors by expected_response,
status classes), timed, for the MB/s ratio."""
import csv, os, sys, time

def main(path):
    start, cpu0 = time.perf_counter(), time.process_time()
    requests = errors = 0
    by_class = {}
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        m, st, ex = header.index("metric_name"), header.index("status"), header.index("expected_response")
        for row in r:
            if row[m] != "http_req_duration":
                continue
            requests += 1
            s = int(row[st] or 0)
            if row[ex] == "false" or (row[ex] == "" and (s == 0 or s >= 400)):
                errors += 1
            if 100 <= s < 600:
                k = "%dxx" % (s // 100)
                by_class[k] = by_class.get(k, 0) + 1
    secs, cpu = time.perf_counter() - start, time.process_time() - cpu0
    mb = os.path.getsize(path) / 1e6
    print("python csv: %.1f MB in %.2f s wall = %.1f MB/s; %.2f CPU s = %.1f MB/CPU-s" % (mb, secs, mb / secs, cpu, mb / cpu))
    print("requests %d errors %d by status %s" % (requests, errors, dict(sorted(by_class.items()))))

if __name__ == "__main__":
    main(sys.argv[1])
