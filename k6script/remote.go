package k6script

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/knee-dev/knee/internal/limits"
	"github.com/knee-dev/knee/redact"
)

// Modules says where a script's remote modules (https:// imports) come
// from. The zero value downloads each at every Load and keeps nothing, as
// k6 does.
type Modules struct {
	// Cache is the directory downloaded modules are kept in, one file per
	// URL (ModulePath); "" keeps none.
	Cache string
	// Offline downloads nothing: every remote module is read from Cache,
	// and one missing there is an error naming its URL and cache file.
	Offline bool
	// Timeout bounds each module's download, redirects and the retry
	// without k6's query included; zero is ModuleTimeout.
	Timeout time.Duration
	// RootCAs are the CAs trusted for downloads; nil means the system's
	// (SSL_CERT_FILE and SSL_CERT_DIR apply, as for any Go program).
	RootCAs *x509.CertPool
	// Proxy picks the proxy of a download (HTTPS_PROXY, NO_PROXY: the
	// caller reads them); nil connects directly.
	Proxy func(*http.Request) (*url.URL, error)
}

// ModuleTimeout is a module download's time limit unless Modules.Timeout
// says otherwise: k6's (internal/loader fetch).
const ModuleTimeout = time.Minute

// maxModuleRequests bounds a download's requests, redirects included:
// Go's default client's 10 (so 9 redirects), which k6 uses.
const maxModuleRequests = 10

// DefaultModuleCache is the module cache of a user whose environment
// getenv reads: $XDG_CACHE_HOME/knee/modules, else
// $HOME/.cache/knee/modules; "" when neither is set.
func DefaultModuleCache(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "knee", "modules")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "knee", "modules")
	}
	return ""
}

// ModulePath is the file of u's module in the cache dir: a folder per
// host, and a name made of the SHA-256 of the whole URL (so two URLs never
// share a file, and userinfo never appears in it) and the URL's last path
// segment for people reading the folder.
func ModulePath(dir string, u *url.URL) string {
	sum := sha256.Sum256([]byte(moduleKey(u)))
	base := safeName(path.Base(u.Path), 48)
	if base == "" || base == "." || base == "_" {
		base = "module.js"
	}
	return filepath.Join(dir, safeName(strings.ToLower(u.Host), 128), hex.EncodeToString(sum[:])+"-"+base)
}

// moduleKey is u as a cache key: the fragment (never sent) left out.
func moduleKey(u *url.URL) string {
	k := *u
	k.Fragment, k.RawFragment = "", ""
	return k.String()
}

// safeName keeps letters, digits, dots and dashes of s (others become
// '_'), at most n bytes: a file name on any file system.
func safeName(s string, n int) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimLeft(string(b), ".")
}

// fetcher gets remote modules for one bundle, from the network or the
// cache as Modules says.
type fetcher struct {
	m      Modules
	ctx    context.Context
	red    *redact.Redactor
	client *http.Client
}

func newFetcher(ctx context.Context, m Modules, red *redact.Redactor) *fetcher {
	if m.Timeout <= 0 {
		m.Timeout = ModuleTimeout
	}
	f := &fetcher{m: m, ctx: ctx, red: red}
	if m.Offline {
		return f
	}
	tr := &http.Transport{
		Proxy:               m.Proxy,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: m.RootCAs},
		TLSHandshakeTimeout: m.Timeout,
		MaxIdleConnsPerHost: 2,
	}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	return f
}

// checkRedirect follows redirects up to maxModuleRequests requests, to
// https:// only: a module asked for over TLS is never fetched in the clear.
func (f *fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxModuleRequests {
		return fmt.Errorf("stopped after %d requests (%d redirects), as k6 does", maxModuleRequests, maxModuleRequests-1)
	}
	if req.URL.Scheme != "https" {
		return fmt.Errorf("redirected to %s: a module is downloaded over https:// only", f.red.URL(req.URL.String()))
	}
	return nil
}

// close lets the fetcher's idle connections go.
func (f *fetcher) close() {
	if f.client != nil {
		f.client.CloseIdleConnections()
	}
}

// get returns the module at u: downloaded (and then kept in the cache),
// or, offline, read from the cache.
func (f *fetcher) get(u *url.URL) ([]byte, error) {
	name := f.red.URL(moduleKey(u))
	file := ""
	if f.m.Cache != "" {
		file = ModulePath(f.m.Cache, u)
	}
	if f.m.Offline {
		return f.cached(name, file)
	}
	b, err := f.download(u, name)
	if err != nil {
		if file != "" {
			if _, serr := os.Stat(file); serr == nil {
				err = fmt.Errorf("%w (a copy is kept in %s: run with --offline to use it)", err, file)
			}
		}
		return nil, err
	}
	if file != "" {
		if err := writeAtomic(file, b); err != nil {
			return nil, fmt.Errorf("remote module %s: keeping it in the module cache: %w (fix: make %s writable, or choose another with --module-cache)", name, err, f.m.Cache)
		}
	}
	return b, nil
}

// cached reads the module name from file, the cache, offline.
func (f *fetcher) cached(name, file string) ([]byte, error) {
	if file == "" {
		return nil, fmt.Errorf("remote module %s: offline, and there is no module cache to read it from (fix: give --module-cache DIR, or set HOME or XDG_CACHE_HOME)", name)
	}
	b, err := limits.ReadFile(file, limits.Script, "remote k6 module", "a module is code, not data")
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remote module %s is not in the module cache (no %s), and offline nothing is downloaded (fix: run once without --offline to download it, or point --module-cache at a cache that has it)", name, file)
	}
	if err != nil {
		return nil, fmt.Errorf("remote module %s: %w", name, err)
	}
	return b, nil
}

// download gets u as k6 does: first with ?_k6=1 added (as k6 announces
// itself), then, if that fails, as written. Both share one deadline.
func (f *fetcher) download(u *url.URL, name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(f.ctx, f.m.Timeout)
	defer cancel()
	tagged := *u
	tagged.Fragment, tagged.RawFragment = "", ""
	if tagged.RawQuery != "" {
		tagged.RawQuery += "&"
	}
	tagged.RawQuery += "_k6=1"
	b, err := f.fetch(ctx, &tagged, name)
	if err != nil && !errors.Is(err, limits.ErrTooLarge) && ctx.Err() == nil {
		plain := *u
		plain.Fragment, plain.RawFragment = "", ""
		b, err = f.fetch(ctx, &plain, name)
	}
	if err != nil && ctx.Err() != nil && f.ctx.Err() == nil {
		return nil, fmt.Errorf("remote module %s: no complete reply within %s, the time limit of a module's download (fix: check the URL and the network, or save the module beside the script and import it by a relative path)", name, f.m.Timeout)
	}
	return b, err
}

// fetch is one GET of u, which must answer 200 with at most limits.Script
// bytes. Errors name the module by name (u redacted), never u itself.
func (f *fetcher) fetch(ctx context.Context, u *url.URL, name string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("remote module %s: %w", name, err)
	}
	res, err := f.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text holds the URL, userinfo and all
		}
		return nil, fmt.Errorf("remote module %s: %w", name, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("remote module %s: the server answered %s, not 200 OK", name, res.Status)
	}
	fix := "save the module beside the script and import it by a relative path, or import a smaller build of it"
	if res.ContentLength > limits.Script {
		return nil, limits.TooLarge(name, "remote k6 module", limits.Script, fix)
	}
	b, err := limits.ReadAll(res.Body, limits.Script, name, "remote k6 module", fix)
	if err != nil && !errors.Is(err, limits.ErrTooLarge) {
		return nil, fmt.Errorf("remote module %s: %w", name, err)
	}
	return b, err
}

// writeAtomic puts b at file by a temporary file renamed over it, so a
// reader never sees half a module and two runs writing at once leave
// one whole copy.
func writeAtomic(file string, b []byte) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// resolveModule is the URL spec names when imported by the remote module
// at base, by k6's rules (internal/loader Resolve): ./, ../ and / resolve
// against base; https:// stands as written; file:// is refused to a
// remote module, any other scheme and bare names to everyone.
func resolveModule(base *url.URL, spec string) (*url.URL, error) {
	if spec == "" {
		return nil, errors.New("an empty import")
	}
	if spec[0] == '.' || spec[0] == '/' {
		ref, err := url.Parse(spec)
		if err != nil {
			return nil, err
		}
		return base.ResolveReference(ref), nil
	}
	if strings.Contains(spec, "://") {
		u, err := url.Parse(spec)
		if err != nil {
			return nil, err
		}
		if u.Scheme == "file" {
			return nil, fmt.Errorf("import %q: a remote module may not import a local file", spec)
		}
		if u.Scheme != "https" {
			return nil, schemeError(spec, u.Scheme)
		}
		return u, nil
	}
	return nil, bareError(spec)
}

// schemeError refuses an import of a scheme other than file and https,
// as k6 does.
func schemeError(spec, scheme string) error {
	return fmt.Errorf("import %q: the schemes of imports are file and https (as in k6), not %s", spec, scheme)
}

// bareError refuses a bare name: k6 has no packages to find one in, and
// its github.com/ and cdnjs.com/ shortcuts are gone.
func bareError(spec string) error {
	for _, host := range []string{"github.com", "cdnjs.com"} {
		if strings.HasPrefix(spec, host) {
			return fmt.Errorf("import %q: k6's %s shortcuts are no longer supported, by k6 or knee: import the file's full https:// URL (for GitHub, the raw file's)", spec, host)
		}
	}
	return fmt.Errorf("import %q: neither a relative path (./, ../, /) nor an https:// URL", spec)
}
