package request

import (
	"context"
	"testing"
)

func TestSplitURL(t *testing.T) {
	tests := []struct {
		url, authority, uri string
		ok                  bool
	}{
		{"http://h", "h", "/", true},
		{"http://h:8080/a/b?c=d e", "", "", false}, // a space: left to net/http
		{"http://127.0.0.1:8080/a/b?c=d&e=%zz", "127.0.0.1:8080", "/a/b?c=d&e=%zz", true},
		{"http://h?x=1", "h", "/?x=1", true},
		{"http://[::1]:80/%41", "[::1]:80", "/%41", true},
		{"http://h/%4", "", "", false},
		{"http://h/#frag", "", "", false},
		{"http://u:p@h/", "", "", false},
		{"http://h:/", "", "", false},
		{"http://h:123456/", "", "", false},
		{"https://h/", "", "", false},
		{"HTTP://h/", "", "", false},
		{"http://é/", "", "", false},
		{"http:///x", "", "", false},
	}
	for _, tt := range tests {
		a, u, ok := splitURL([]byte(tt.url))
		if ok != tt.ok || string(a) != tt.authority || string(u) != tt.uri {
			t.Errorf("splitURL(%q) = %q, %q, %v; want %q, %q, %v", tt.url, a, u, ok, tt.authority, tt.uri, tt.ok)
		}
	}
}

func TestDialAddr(t *testing.T) {
	for in, want := range map[string]string{"h": "h:80", "h:81": "h:81", "[::1]": "[::1]:80", "[::1]:9": "[::1]:9"} {
		if got := dialAddr([]byte(in)); got != want {
			t.Errorf("dialAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// The bytes the lean client writes, worked out from RFC 9112 and net/http's
// rules: Host from the URL or a Host header, the default User-Agent unless
// one is given, Content-Length for a body or a POST, and none of the
// headers net/http only writes from the request's fields.
func TestLeanWritesRequests(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"static GET", Spec{URL: "http://h:81/a?b=1"},
			"GET /a?b=1 HTTP/1.1\r\nHost: h:81\r\nUser-Agent: Go-http-client/1.1\r\n\r\n"},
		{"empty POST", Spec{Method: "POST", URL: "http://h"},
			"POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 0\r\n\r\n"},
		{"templated", Spec{Method: "PUT", URL: "http://h/b/{vu}", Body: `{"i":{iter}}`,
			Headers: []Header{{"host", "v{vu}.example"}, {"X-It", " {iter} "}, {"Content-Length", "99"}, {"user-agent", "knee"}}},
			"PUT /b/3 HTTP/1.1\r\nHost: v3.example\r\nContent-Length: 7\r\nX-It: 4\r\nUser-Agent: knee\r\n\r\n{\"i\":4}"},
		{"empty User-Agent sends none", Spec{URL: "http://h/", Headers: []Header{{"User-Agent", ""}}},
			"GET / HTTP/1.1\r\nHost: h\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSender(t, []Spec{tt.spec}, Options{})
			c := &s.reqs[0]
			if c.plan == nil {
				t.Fatal("not planned for the lean client")
			}
			_, out, _, ok := s.renderLean(c, 3, 4, s.leanBufs.Get().(*leanBuf))
			if !ok || string(out) != tt.want {
				t.Errorf("ok %v, wrote\n%q\nwant\n%q", ok, out, tt.want)
			}
		})
	}
}

// Header values net/http refuses go to net/http, which reports them.
func TestLeanLeavesBadHeaderValuesToNetHTTP(t *testing.T) {
	vars := map[string][]string{"v": {"a\r\nX-Evil: 1"}}
	s := newSender(t, []Spec{{URL: "http://127.0.0.1:1/", Headers: []Header{{"X-V", "{v}"}}}}, Options{Vars: vars})
	if _, _, _, ok := s.renderLean(&s.reqs[0], 1, 1, s.leanBufs.Get().(*leanBuf)); ok {
		t.Error("the lean client took a header value with CRLF")
	}
	res := s.Do(context.Background(), 1, 1)
	if res.Err == nil || res.ErrClass != ClassOther {
		t.Errorf("err %v class %q; want net/http's invalid header error, class other", res.Err, res.ErrClass)
	}
}
