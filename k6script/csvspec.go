package k6script

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// csvTimeFormats are k6's CSV timeFormat values; the default is k6's,
// unix (whole seconds: k6 v1.8.1 internal/output/csv/config.go), so a
// tool that reads k6's CSV reads knee's the same. unix_micro or
// rfc3339_nano keep the sub-second order.
var csvTimeFormats = map[string]func(time.Time) string{
	"unix":         func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) },
	"unix_milli":   func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) },
	"unix_micro":   func(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) },
	"unix_nano":    func(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) },
	"rfc3339":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"rfc3339_nano": func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
}

// ParseCSVOut reads what follows --out csv= as k6 takes it: a file name,
// or fileName=FILE,timeFormat=FORMAT (either key may be left out, though
// a file is needed). timeFormat is "" when not given.
func ParseCSVOut(spec string) (file, timeFormat string, err error) {
	if !strings.Contains(spec, "=") {
		file = spec
	} else {
		for _, kv := range strings.Split(spec, ",") {
			k, val, _ := strings.Cut(kv, "=")
			switch strings.TrimSpace(k) {
			case "fileName":
				file = val
			case "timeFormat":
				if _, ok := csvTimeFormats[val]; !ok {
					return "", "", fmt.Errorf("--out csv=%s: timeFormat %q: use unix, unix_milli, unix_micro, unix_nano, rfc3339 or rfc3339_nano", spec, val)
				}
				timeFormat = val
			default:
				return "", "", fmt.Errorf("--out csv=%s: unknown key %q; write csv=FILE or csv=fileName=FILE,timeFormat=unix_milli", spec, k)
			}
		}
	}
	if file == "" {
		return "", "", fmt.Errorf("--out csv=%s: give a file name, e.g. --out csv=results.csv or csv=fileName=results.csv", spec)
	}
	return file, timeFormat, nil
}

// SetTimeFormat makes a CSV output write its timestamps in k6's timeFormat
// name (see ParseCSVOut); "" keeps k6's default, unix.
func (o *Output) SetTimeFormat(name string) error {
	if name == "" {
		return nil
	}
	f, ok := csvTimeFormats[name]
	if !ok {
		return fmt.Errorf("timeFormat %q: use unix, unix_milli, unix_micro, unix_nano, rfc3339 or rfc3339_nano", name)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stamp = f
	return nil
}
