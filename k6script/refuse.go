package k6script

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// lackedAPI is a k6 API knee does not have, found in the script's text
// before the test starts: k6 would run it, so knee refuses the script
// rather than fail each iteration with an exception while the run exits 0.
type lackedAPI struct {
	re  *regexp.Regexp
	why string
	// in, when set, must match the file's own text (an import of the
	// module the API belongs to), so a name other modules use is left be.
	in *regexp.Regexp
}

// lackedAPIs are compiled at their first use, not at every start of knee.
var lackedAPIs = sync.OnceValue(func() []lackedAPI {
	return []lackedAPI{
		// k6/execution's VU tags and metadata (vu.tags, vu.metrics.tags,
		// vu.metrics.metadata) change the tags of every later sample of the VU:
		// not built.
		{re: regexp.MustCompile(`\bvu\s*\.\s*(tags|metrics)\b`), in: regexp.MustCompile(`['"]k6/execution['"]`),
			why: "exec.vu.tags and exec.vu.metrics (k6/execution) are not supported by knee; tag requests with params.tags, or set options.tags or a scenario's tags"},
		// k6/execution's scenario.progress (each executor's own progress
		// function) and test.options (k6's consolidated options, every default
		// filled in): not built.
		{re: regexp.MustCompile(`\bscenario\s*\.\s*progress\b`), in: regexp.MustCompile(`['"]k6/execution['"]`),
			why: "exec.scenario.progress (k6/execution) is not supported by knee; count with exec.scenario.iterationInTest, or time with exec.instance.currentTestRunDuration"},
		{re: regexp.MustCompile(`\btest\s*\.\s*options\b`), in: regexp.MustCompile(`['"]k6/execution['"]`),
			why: "exec.test.options (k6/execution) is not supported by knee; read the script's own exported options object"},
		{re: regexp.MustCompile(`\.stream\s*\(\s*\)`), in: regexp.MustCompile(`['"]k6/(experimental/)?websockets['"]`),
			why: "Blob.stream() (k6/websockets) is not supported by knee (it has no ReadableStream); use await blob.arrayBuffer() or blob.text()"},
	}
})

// refuseLacked scans the script's own files (the bundle's sources, read
// from its source map) and the remote modules it imports (remote, by
// their names there) for lackedAPIs, comments left out, and reports each
// use as file:line:col, relative to the entry's directory, or URL:line:col.
func refuseLacked(entry string, sourceMap []byte, remote map[string][]byte) error {
	var sm struct {
		Sources []string `json:"sources"`
	}
	if err := json.Unmarshal(sourceMap, &sm); err != nil {
		return nil // no map: nothing to scan (the bundle always has one)
	}
	abs, err := filepath.Abs(entry)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(abs)
	var errs []string
	for _, src := range sm.Sources {
		b, name := remote[src], strings.TrimPrefix(src, remoteNS+":")
		if b == nil {
			p := src
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, filepath.FromSlash(src))
			}
			if b, err = os.ReadFile(p); err != nil {
				continue
			}
			name = relTo(entry, p)
		}
		code := maskComments(string(b))
		for _, api := range lackedAPIs() {
			if api.in != nil && !api.in.Match(b) {
				continue
			}
			for _, loc := range api.re.FindAllStringIndex(code, -1) {
				line := 1 + strings.Count(code[:loc[0]], "\n")
				col := loc[0] - strings.LastIndexByte(code[:loc[0]], '\n')
				errs = append(errs, fmt.Sprintf("%s:%d:%d: %s", name, line, col, api.why))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return &ScriptError{Msg: strings.Join(errs, "\n")}
}

// maskComments blanks JavaScript comments and the insides of strings and
// template literals (keeping newlines, so lines and columns stay): only
// code is scanned.
func maskComments(s string) string {
	b := []byte(s)
	const (
		code = iota
		line
		block
		str
	)
	state, quote := code, byte(0)
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch state {
		case code:
			switch {
			case c == '/' && i+1 < len(b) && b[i+1] == '/':
				state = line
				b[i] = ' '
			case c == '/' && i+1 < len(b) && b[i+1] == '*':
				state = block
				b[i] = ' '
			case c == '"' || c == '\'' || c == '`':
				state, quote = str, c
			}
		case line:
			if c == '\n' {
				state = code
			} else {
				b[i] = ' '
			}
		case block:
			if c == '*' && i+1 < len(b) && b[i+1] == '/' {
				b[i], b[i+1] = ' ', ' '
				i++
				state = code
			} else if c != '\n' {
				b[i] = ' '
			}
		case str:
			switch {
			case c == '\\':
				b[i] = ' '
				if i+1 < len(b) && b[i+1] != '\n' {
					b[i+1] = ' '
				}
				i++
			case c == quote || c == '\n' && quote != '`':
				state = code
			case c != '\n':
				b[i] = ' '
			}
		}
	}
	return string(b)
}
