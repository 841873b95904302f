// Package redact keeps secrets out of everything knee writes: run
// directories, reports, exports, the terminal and error messages.
//
// Secrets are masked once, where user input becomes names and metadata (the
// request name tag, run.json, probe descriptions), not in every writer. A
// Redactor knows the rules (which query parameters are secret) and remembers
// every secret it has masked, so Text can also scrub free text such as an
// error message that echoes a URL or a header value.
//
// What is a secret:
//   - a URL's userinfo (user and password): http://REDACTED@host/
//   - a DSN's password: postgres://knee:REDACTED@host/db, password=REDACTED
//   - the value of Authorization, Proxy-Authorization, Cookie, Set-Cookie and
//     API-key or token headers (SensitiveHeader)
//   - the value of each query parameter named in the rules (--redact-query)
//
// Masking never changes anything else in a string, so a URL without secrets
// is returned as is and a name tag stays stable from run to run.
//
// Concurrency: a Redactor is safe for concurrent use.
package redact

import (
	"encoding/base64"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask replaces every secret.
const Mask = "REDACTED"

// minLiteral is the shortest remembered secret Text replaces wherever it
// appears: shorter ones ("a", "2000") would mask unrelated text; the structural
// rules still mask them in URLs, headers and DSNs.
const minLiteral = 6

// Redactor masks secrets by its rules and remembers the ones it masked.
// The zero value masks userinfo, DSN passwords and sensitive headers but no
// query parameter; use New to name those.
type Redactor struct {
	mu      sync.Mutex
	query   []string // lower-case query parameter names whose values are secret; only appended to
	secrets []string // literal secrets seen, longest first
}

// New returns a Redactor that also masks the values of the named query
// parameters (compared without regard to case), e.g. "token", "api_key".
func New(queryParams ...string) *Redactor {
	r := &Redactor{}
	for _, q := range queryParams {
		if q = strings.ToLower(strings.TrimSpace(q)); q != "" && !slices.Contains(r.query, q) {
			r.query = append(r.query, q)
		}
	}
	return r
}

// QueryParams returns the query parameter names r masks.
func (r *Redactor) QueryParams() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.query)
}

// Merge makes r mask what o masks too: o's query parameters and the secrets
// o remembers. A nil r does nothing.
func (r *Redactor) Merge(o *Redactor) {
	if r == nil || o == nil || o == r {
		return
	}
	o.mu.Lock()
	query, secrets := slices.Clone(o.query), slices.Clone(o.secrets)
	o.mu.Unlock()
	r.mu.Lock()
	for _, q := range query {
		if !slices.Contains(r.query, q) {
			r.query = append(r.query, q)
		}
	}
	r.mu.Unlock()
	r.Remember(secrets...)
}

// SensitiveHeader reports whether a header's value is a secret: credentials
// and cookies, and any header whose name speaks of a key, token, secret,
// password or session (X-Api-Key, X-Auth-Token, X-Amz-Security-Token, ...).
func SensitiveHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, w := range []string{"api-key", "apikey", "api_key", "token", "secret", "password", "passwd", "session", "auth"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// SensitiveEnv reports whether an environment variable's name says its
// value is a secret: TOKEN, SECRET, PASSWORD, KEY, AUTH, CREDENTIAL,
// SESSION or COOKIE in it (API_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY).
func SensitiveEnv(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "AUTH", "CREDENTIAL", "SESSION", "COOKIE"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Header returns value masked when name is a sensitive header.
func (r *Redactor) Header(name, value string) string {
	if !SensitiveHeader(name) || value == "" {
		return value
	}
	r.Remember(value)
	// "Bearer abc" and "Basic abc": the secret is the credentials, but the
	// whole value goes, so a short scheme-less token cannot slip through.
	return Mask
}

// URL returns raw with its userinfo and the values of the named query
// parameters masked. raw may be a template with {placeholders} or not a URL
// at all; anything that is not a secret is left byte for byte. The secrets
// are remembered for Text.
func (r *Redactor) URL(raw string) string {
	return r.url(raw, false, true)
}

// Name is URL without remembering: for a name made per request (a k6
// script's URL with a fresh token each iteration), where remembering every
// secret would grow without bound. It takes no lock when no query
// parameter can be a secret and raw has no userinfo.
func (r *Redactor) Name(raw string) string {
	if !strings.Contains(raw, "@") && !strings.Contains(raw, "?") {
		return raw
	}
	return r.url(raw, false, false)
}

// DSN returns a database connection string with its password masked, in URL
// form (postgres://user:pw@host/db: the user stays) or key=value form
// (password=pw). A SQLite file path is returned as is.
func (r *Redactor) DSN(dsn string) string {
	if strings.Contains(dsn, "://") {
		return r.url(dsn, true, true)
	}
	return r.keyValues(dsn)
}

// url masks the userinfo of the URL starting at raw (all of it, or only the
// password when keepUser) and named query values, remembering the secrets
// when remember.
func (r *Redactor) url(raw string, keepUser, remember bool) string {
	keep := func(s string) {
		if remember {
			r.Remember(s)
		}
	}
	var b strings.Builder
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		b.WriteString(rest[:i+3])
		rest = rest[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			user, pw, hasPW := strings.Cut(auth[:at], ":")
			switch {
			case keepUser && hasPW:
				keep(pw)
				b.WriteString(user + ":" + Mask)
			case keepUser:
				b.WriteString(user)
			case hasPW:
				// Only the password is remembered as a literal: a user
				// name such as "knee" would mask unrelated text. The pair
				// is remembered in the form HTTP sends it (Authorization:
				// Basic base64(user:password)), which a server may echo.
				keep(pw)
				if remember {
					r.rememberBasic(auth[:at])
				}
				b.WriteString(Mask)
			default: // a lone user is a token (https://TOKEN@host)
				keep(user)
				b.WriteString(Mask)
			}
			b.WriteString(auth[at:])
		} else {
			b.WriteString(auth)
		}
		rest = rest[end:]
	}
	r.mu.Lock()
	names := r.query
	r.mu.Unlock()
	q := strings.IndexByte(rest, '?')
	if q < 0 || len(names) == 0 {
		b.WriteString(rest)
		return b.String()
	}
	b.WriteString(rest[:q+1])
	query := rest[q+1:]
	frag := ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	for i, pair := range strings.Split(query, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		k, v, ok := strings.Cut(pair, "=")
		if ok && v != "" && secretParam(names, k) {
			keep(v)
			b.WriteString(k + "=" + Mask)
			continue
		}
		b.WriteString(pair)
	}
	b.WriteString(frag)
	return b.String()
}

func secretParam(names []string, k string) bool {
	if u, err := url.QueryUnescape(k); err == nil {
		k = u
	}
	return slices.Contains(names, strings.ToLower(k))
}

var kvPassword = regexp.MustCompile(`(?i)\b(password|passwd|pwd)\s*=\s*('[^']*'|"[^"]*"|[^\s;&]+)`)

// keyValues masks password=... in a key=value connection string.
func (r *Redactor) keyValues(s string) string {
	return kvPassword.ReplaceAllStringFunc(s, func(m string) string {
		sub := kvPassword.FindStringSubmatch(m)
		r.Remember(strings.Trim(sub[2], `'"`))
		return sub[1] + "=" + Mask
	})
}

// urlInText finds URLs (scheme://...) inside free text, up to a space or quote.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// headerInText finds "Name: value" lines or fragments of sensitive headers.
var headerInText = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|set-cookie|cookie|x-[a-z0-9-]*(?:key|token|secret|auth)[a-z0-9-]*)\s*:\s*([^\r\n"]+)`)

// Text scrubs free text, e.g. an error message: URLs in it are masked as by
// URL (with DSN rules kept to their password), password=... pairs and
// sensitive "Header: value" fragments are masked, and every secret r has
// remembered is replaced wherever it appears.
func (r *Redactor) Text(s string) string {
	if s == "" {
		return s
	}
	s = urlInText.ReplaceAllStringFunc(s, func(u string) string { return r.url(u, false, true) })
	s = r.keyValues(s)
	s = headerInText.ReplaceAllStringFunc(s, func(m string) string {
		sub := headerInText.FindStringSubmatch(m)
		v := strings.TrimSpace(sub[2])
		if v == Mask {
			return m
		}
		r.Remember(v)
		return sub[1] + ": " + Mask
	})
	return r.literals(s)
}

// Texts scrubs each of list in place and returns it.
func (r *Redactor) Texts(list []string) []string {
	for i, s := range list {
		list[i] = r.Text(s)
	}
	return list
}

// literals replaces every remembered secret in s.
func (r *Redactor) literals(s string) string {
	r.mu.Lock()
	secrets := r.secrets
	r.mu.Unlock()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Mask)
		}
	}
	return s
}

// rememberBasic remembers base64(user:password), the credentials of HTTP
// Basic authentication, from a URL's userinfo (percent-decoded, as sent).
func (r *Redactor) rememberBasic(userinfo string) {
	if u, err := url.PathUnescape(userinfo); err == nil {
		userinfo = u
	}
	enc := base64.StdEncoding.EncodeToString([]byte(userinfo))
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.secrets, enc) {
		next := append(slices.Clone(r.secrets), enc)
		slices.SortStableFunc(next, func(a, b string) int { return len(b) - len(a) })
		r.secrets = next
	}
}

// Remember adds literal secrets (and their percent-decoded and base64
// forms, as a server may echo a credential it decoded or one it received)
// that Text replaces wherever they appear; ones shorter than 6 bytes are
// ignored.
// A caller that holds a secret knee never parses (a k6 script's token, an
// environment variable) hands it here.
func (r *Redactor) Remember(secrets ...string) {
	var add []string
	for _, s := range secrets {
		add = append(add, s)
		if u, err := url.QueryUnescape(s); err == nil && u != s {
			add = append(add, u)
		}
		if u, err := url.PathUnescape(s); err == nil && u != s {
			add = append(add, u)
		}
		if len(s) >= minLiteral {
			// "Basic dXNlcjpwYXNz" given whole is remembered as is; its
			// credentials may come back decoded, and any secret encoded.
			if scheme, cred, ok := strings.Cut(s, " "); ok && strings.EqualFold(scheme, "basic") {
				if d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
					add = append(add, string(d))
				}
			}
			add = append(add, base64.StdEncoding.EncodeToString([]byte(s)))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// A new slice each time: Text reads the old one without the lock.
	next := slices.Clone(r.secrets)
	for _, s := range add {
		if len(s) >= minLiteral && s != Mask && !slices.Contains(next, s) {
			next = append(next, s)
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortStableFunc(next, func(a, b string) int { return len(b) - len(a) })
	r.secrets = next
}

// Writer returns a writer that scrubs each Write to w with Text: the last
// line of defence for the terminal, where knee writes whole lines. A secret
// split across two Writes is not caught; the boundaries upstream are what
// keep secrets out, this only catches what slipped past them.
//
// When w has a file descriptor (a terminal), so does the writer: callers
// that ask the terminal's width through Fd keep working.
//
// Writes are serialised: knee writes stderr from more than one goroutine
// (the signal watcher beside the command), and w need not allow that.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		return &fdWriter{&writer{r: r, w: w}, f}
	}
	return &writer{r: r, w: w}
}

type fdWriter struct {
	*writer
	f interface{ Fd() uintptr }
}

// Fd is the file descriptor of the writer underneath.
func (w *fdWriter) Fd() uintptr { return w.f.Fd() }

type writer struct {
	r  *Redactor
	mu sync.Mutex // one Write to w at a time
	w  io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	s := w.r.Text(string(p))
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := io.WriteString(w.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// FromArgs returns a Redactor for a command line: the query parameters named
// by --redact-query, and every secret in the arguments remembered (URLs'
// userinfo and named query values, DSN passwords, sensitive "Name: value"
// headers), so Text scrubs them from whatever the command prints, error
// messages included.
func FromArgs(args []string) *Redactor {
	var names []string
	for i, a := range args {
		switch {
		case a == "--redact-query" && i+1 < len(args):
			names = append(names, strings.Split(args[i+1], ",")...)
		case strings.HasPrefix(a, "--redact-query="):
			names = append(names, strings.Split(strings.TrimPrefix(a, "--redact-query="), ",")...)
		}
	}
	r := New(names...)
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				a = v
			} else {
				continue
			}
		}
		r.URL(a)
		r.keyValues(a)
		if k, v, ok := strings.Cut(a, ":"); ok && !strings.Contains(a, "://") {
			r.Header(k, strings.TrimSpace(v))
		}
	}
	return r
}
