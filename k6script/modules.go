package k6script

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dop251/goja"
)

// module builds one k6 module's exports for one VU. Each lives in its own
// file (mod_*.go); adding a module is a new file and a line in modules.
type module func(v *vu) *goja.Object

// modules are the k6 modules knee provides, by import path.
func modules() map[string]module {
	return map[string]module{
		"k6":           k6Module,
		"k6/http":      httpModule,
		"k6/metrics":   metricsModule,
		"k6/encoding":  encodingModule,
		"k6/crypto":    cryptoModule,
		"k6/html":      htmlModule,
		"k6/execution": executionModule,
		"k6/data":      dataModule,
		"k6/timers":    func(v *vu) *goja.Object { return v.timerExports },
		"k6/ws":        wsModule,

		"k6/experimental/fs":  fsModule,
		"k6/experimental/csv": csvModule,
		"k6/net/grpc":         grpcModule,
		// k6/websockets and its old experimental name (mod_websockets.go)
		"k6/websockets":              websocketsModule,
		"k6/experimental/websockets": websocketsModule,
	}
}

func knownModule(name string) bool {
	_, ok := modules()[name]
	return ok
}

func moduleNames() []string {
	var names []string
	for n := range modules() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// unsupported says why a k6 module is not run and what to do instead.
func unsupported(path string) (string, bool) {
	if knownModule(path) { // k6/experimental/websockets is one
		return "", false
	}
	switch {
	case path == "k6/browser" || path == "k6/experimental/browser":
		return fmt.Sprintf("%q: browser tests are not supported by knee; run them with k6 and the API load with knee", path), true
	case strings.HasPrefix(path, "k6/experimental/grpc"):
		// k6 v1 refuses it too: the module graduated to k6/net/grpc
		return fmt.Sprintf("%q: k6/experimental/grpc has been graduated, use k6/net/grpc (the same API)", path), true
	case path == "k6/secrets":
		// k6's contract is more than a lookup: --secret-source kinds (file,
		// url, cloud), named sources, and every value fetched redacted from
		// the logs; half of it would print secrets.
		return fmt.Sprintf("%q: secrets are not supported by knee (it has no --secret-source and does not redact secrets from its output); pass the value with -e NAME=VALUE and read __ENV.NAME, or run the script with k6", path), true
	case path == "k6/experimental/timers" || path == "k6/experimental/webcrypto":
		// Removed from k6 v1 too (internal/js/jsmodules.go): both graduated to globals.
		return fmt.Sprintf("%q: k6 v1 removed it too; its API is global now (setTimeout…, crypto): remove the import", path), true
	case path == "k6/experimental/tracing":
		return fmt.Sprintf("%q: k6 v1 removed it too (it is a jslib module now); remove the import, or run the script with k6", path), true
	case path == "k6/crypto/x509":
		return fmt.Sprintf("%q: x509 certificate parsing is not supported by knee; remove the import, or run the script with k6", path), true
	case strings.HasPrefix(path, "k6/experimental/") && !knownModule(path):
		return fmt.Sprintf("%q: k6's experimental modules are not supported by knee, but for k6/experimental/fs and k6/experimental/csv; remove the import, or run the script with k6", path), true
	case strings.HasPrefix(path, "k6/x/"):
		return fmt.Sprintf("%q: k6 extensions (xk6) are not supported by knee; run the script with a k6 build that has the extension", path), true
	}
	return "", false
}
