package redact

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	r := New("token", "API_KEY")
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:8080/books/{isbn}", "http://127.0.0.1:8080/books/{isbn}"},
		{"http://user:pw123456@host/?token=SECRETQ", "http://REDACTED@host/?token=REDACTED"},
		{"https://TOKEN42abc@host", "https://REDACTED@host"},
		{"http://h/p?a=1&api_key=k-123&b=2#frag", "http://h/p?a=1&api_key=REDACTED&b=2#frag"},
		{"http://h/p?Token=x&token=&tok=y", "http://h/p?Token=REDACTED&token=&tok=y"},
		{"http://h/p?%74oken=x", "http://h/p?%74oken=REDACTED"},
		{"http://a@b@host/x?y", "http://REDACTED@host/x?y"},
		{"/relative?token=abc", "/relative?token=REDACTED"},
		{"not a url", "not a url"},
		{"", ""},
	} {
		if got := r.URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := (&Redactor{}).URL("http://h/?token=abc"); got != "http://h/?token=abc" {
		t.Errorf("zero Redactor masked an unnamed query parameter: %q", got)
	}
}

func TestDSN(t *testing.T) {
	r := New()
	for _, c := range []struct{ in, want string }{
		{"postgres://knee:s3cretpw@127.0.0.1:5432/knee?sslmode=disable", "postgres://knee:REDACTED@127.0.0.1:5432/knee?sslmode=disable"},
		{"postgres://knee@127.0.0.1/knee", "postgres://knee@127.0.0.1/knee"},
		{"host=db user=knee password=s3cretpw dbname=knee", "host=db user=knee password=REDACTED dbname=knee"},
		{"host=db password='a b c' dbname=knee", "host=db password=REDACTED dbname=knee"},
		{"/tmp/bookstore.db", "/tmp/bookstore.db"},
	} {
		if got := r.DSN(c.in); got != c.want {
			t.Errorf("DSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHeader(t *testing.T) {
	r := New()
	for _, c := range []struct {
		name, value, want string
	}{
		{"Authorization", "Bearer abc.def", Mask},
		{"proxy-authorization", "Basic Zm9vOmJhcg==", Mask},
		{"Cookie", "sid=1", Mask},
		{"Set-Cookie", "sid=1; HttpOnly", Mask},
		{"X-Api-Key", "k", Mask},
		{"X-Auth-Token", "t", Mask},
		{"Accept", "application/json", "application/json"},
		{"Content-Type", "text/plain", "text/plain"},
		{"Authorization", "", ""},
	} {
		if got := r.Header(c.name, c.value); got != c.want {
			t.Errorf("Header(%q, %q) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
}

func TestTextScrubsRememberedAndStructural(t *testing.T) {
	r := New("token")
	r.URL("http://u:hunter22pw@h/?token=QSECRET99")
	r.Header("Authorization", "Bearer AUTHSECRET1")
	for _, c := range []struct{ in, want string }{
		// net/http's own message shape, with the query and a bare echo
		{`Get "http://u:***@h/?token=QSECRET99": dial tcp: refused`, `Get "http://REDACTED@h/?token=REDACTED": dial tcp: refused`},
		{"bad password hunter22pw given", "bad password REDACTED given"},
		{"sent Authorization: Bearer AUTHSECRET1", "sent Authorization: REDACTED"},
		{"header authorization: Bearer OTHER", "header authorization: REDACTED"},
		{"X-Api-Key: zzz", "X-Api-Key: REDACTED"},
		{"connect password=abcdef host=x", "connect password=REDACTED host=x"},
		{"QSECRET99 alone", "REDACTED alone"},
		{"nothing secret here: 2000 req/s", "nothing secret here: 2000 req/s"},
	} {
		if got := r.Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestShortSecretsAreNotLiterals(t *testing.T) {
	r := New("token")
	r.URL("http://knee:pw@h/?token=2000")
	if got := r.Text("rate 2000 by knee, pw"); got != "rate 2000 by knee, pw" {
		t.Errorf("short secrets masked unrelated text: %q", got)
	}
}

func TestFromArgs(t *testing.T) {
	args := []string{"run", "--url", "http://alice:ARGPASS01@h/?sig=ARGSIG0001&x=1", "--redact-query=sig",
		"--header", "X-Api-Key: ARGKEY0001", "--postgres=postgres://k:ARGPG00001@h/db", "--db", "host=h password=ARGKV00001"}
	r := FromArgs(args)
	msg := "ARGPASS01 ARGSIG0001 ARGKEY0001 ARGPG00001 ARGKV00001"
	if got := r.Text(msg); strings.Contains(got, "ARG") {
		t.Errorf("Text left a secret of the arguments: %q", got)
	}
}

func TestWriter(t *testing.T) {
	r := New()
	r.Remember("WRITERSECRET")
	var b bytes.Buffer
	n, err := r.Writer(&b).Write([]byte("x WRITERSECRET y\n"))
	if err != nil || n != len("x WRITERSECRET y\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b.String() != "x REDACTED y\n" {
		t.Errorf("wrote %q", b.String())
	}
}

// FuzzURL checks that masking never panics, is idempotent, leaves a URL
// without secrets alone, and that no named query value or password survives.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"http://u:p@h/?token=x", "http://h/{a}?b=c&token=", "postgres://a:b@c/d", "?token=x#y", "://@?&=", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := New("token")
		once := r.URL(s)
		if twice := r.URL(once); twice != once {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, once, twice)
		}
		if !strings.Contains(s, "@") && !strings.Contains(s, "token=") && once != s {
			t.Fatalf("changed a URL without secrets: %q -> %q", s, once)
		}
		_ = r.DSN(s)
		_ = r.Text(s)
	})
}

// FuzzText checks that Text never panics and a remembered secret never survives.
func FuzzText(f *testing.F) {
	f.Add("error: Get \"http://u:SECRETPW@h/\"", "SECRETPW")
	f.Add("Authorization: Bearer x", "abcdefgh")
	f.Fuzz(func(t *testing.T, text, secret string) {
		r := New("token")
		r.Remember(secret)
		got := r.Text(text + secret + text)
		if len(secret) >= minLiteral && !strings.Contains(Mask, secret) && strings.Contains(got, secret) && !strings.Contains(secret, Mask) {
			t.Fatalf("secret %q survived in %q", secret, got)
		}
	})
}

// Name masks like URL but remembers nothing: per-request names with fresh
// tokens must not grow the redactor.
func TestNameRemembersNothing(t *testing.T) {
	r := New("token")
	for i := range 1000 {
		u := "http://u:pass" + strings.Repeat("x", i%7) + "word@h/p?token=tok" + strings.Repeat("y", i) + "&a=1"
		if got := r.Name(u); got != "http://REDACTED@h/p?token=REDACTED&a=1" {
			t.Fatalf("Name(%q) = %q", u, got)
		}
	}
	if n := len(r.secrets); n != 0 {
		t.Errorf("Name remembered %d secrets", n)
	}
	if got := r.Name("http://h/books/1"); got != "http://h/books/1" {
		t.Errorf("Name changed a plain URL: %q", got)
	}
}

func BenchmarkName(b *testing.B) {
	r := New("token")
	for b.Loop() {
		r.Name("http://127.0.0.1:5080/api/books/9780441172719?token=abcdef&x=1")
	}
}

// A terminal stays a terminal: the writer on a file keeps its descriptor.
func TestWriterKeepsFd(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, ok := New().Writer(f).(interface{ Fd() uintptr })
	if !ok || w.Fd() != f.Fd() {
		t.Errorf("the writer on a file lost its descriptor")
	}
	if _, ok := New().Writer(&bytes.Buffer{}).(interface{ Fd() uintptr }); ok {
		t.Errorf("the writer on a buffer claims a descriptor")
	}
}

// A credential comes back encoded: a remote-write endpoint echoing the
// Basic credentials it got (base64 of user:password, computed with
// Python's base64 module), or a token it received as base64; and a Basic
// header given whole comes back decoded.
func TestBase64FormsMasked(t *testing.T) {
	for _, tc := range []struct {
		name string
		give func(r *Redactor)
		echo string
	}{
		{"URL userinfo as Basic", func(r *Redactor) { r.URL("http://alice:s3cret-pw@h/api/v1/write") }, `400 Bad Request: {"authorization":"Basic YWxpY2U6czNjcmV0LXB3"}`},
		{"token as base64", func(r *Redactor) { r.Remember("tok-12345678") }, "got dG9rLTEyMzQ1Njc4 in the body"},
		{"Basic header decoded", func(r *Redactor) { r.Header("Authorization", "Basic YWxpY2U6czNjcmV0LXB3") }, "user alice:s3cret-pw refused"},
	} {
		r := New()
		tc.give(r)
		got := r.Text(tc.echo)
		if strings.Contains(got, "YWxpY2U6czNjcmV0LXB3") || strings.Contains(got, "dG9rLTEyMzQ1Njc4") || strings.Contains(got, "s3cret") || !strings.Contains(got, Mask) {
			t.Errorf("%s: Text(%q) = %q; want the credential masked", tc.name, tc.echo, got)
		}
	}
}
