package cli

import (
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpproxy"

	"github.com/knee-dev/knee/k6script"
)

// scriptModules is where a script's https:// imports come from: the flags,
// the user's cache directory, and the proxy of HTTPS_PROXY and NO_PROXY,
// as k6 honours them for its downloads.
func scriptModules(sf scriptFlags, getenv func(string) string) k6script.Modules {
	m := k6script.Modules{Cache: sf.modules, Offline: sf.offline}
	if m.Cache == "" && getenv != nil {
		m.Cache = k6script.DefaultModuleCache(getenv)
	}
	if getenv != nil {
		env := func(k string) string {
			if v := getenv(k); v != "" {
				return v
			}
			return getenv(strings.ToLower(k))
		}
		pc := httpproxy.Config{HTTPSProxy: env("HTTPS_PROXY"), NoProxy: env("NO_PROXY")}
		proxy := pc.ProxyFunc()
		m.Proxy = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
	}
	return m
}
