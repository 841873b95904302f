package k6script

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf16"

	"golang.org/x/crypto/md4" // NTLM's NT hash is MD4 (MS-NLMP 3.3.2)

	"github.com/knee-dev/knee/k6metric"
)

// The server's side of NTLM (MS-NLMP), written from the specification so
// that the test checks knee's handshake against the protocol, not against
// the library knee uses.

// utf16le is a string as NTLM's Unicode strings are.
func utf16le(s string) []byte {
	var b bytes.Buffer
	for _, u := range utf16.Encode([]rune(s)) {
		binary.Write(&b, binary.LittleEndian, u)
	}
	return b.Bytes()
}

func hmacMD5(key []byte, data ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, d := range data {
		m.Write(d)
	}
	return m.Sum(nil)
}

// ntowfV2 is MS-NLMP 3.3.2's NTOWFv2: HMAC-MD5 keyed by the NT hash
// (MD4 of the password in UTF-16LE) of the upper-cased user and the
// domain, in UTF-16LE.
func ntowfV2(password, user, domain string) []byte {
	h := md4.New()
	h.Write(utf16le(password))
	return hmacMD5(h.Sum(nil), utf16le(strings.ToUpper(user)+domain))
}

// MS-NLMP 4.2.4.1.1's published NTOWFv2 of User, Domain, Password: the
// server's maths is right before it judges knee.
func TestNTOWFv2KnownAnswer(t *testing.T) {
	if got := hex.EncodeToString(ntowfV2("Password", "User", "Domain")); got != "0c868a403bfd7a93a3001ef22ef02e3f" {
		t.Fatalf("NTOWFv2 = %s; want MS-NLMP's 0c868a403bfd7a93a3001ef22ef02e3f", got)
	}
}

// ntlmServer answers /ntlm behind NTLM for user ada of domain KNEE with
// password s3cret (and for user bob, no domain, password hunter2): a
// request without Authorization gets 200 on a connection already
// authenticated, else 401 with WWW-Authenticate Basic, Negotiate and
// NTLM (the client must choose NTLM); a NEGOTIATE message gets the
// CHALLENGE (a fixed server challenge, the target KNEE, a timestamp); an
// AUTHENTICATE message on the connection that got the challenge is
// checked by NTLMv2's maths and authenticates the connection (200, "hello
// " and the user), else 401. conns counts the connections that carried
// a NEGOTIATE; fails collects what the server found wrong.
type ntlmServer struct {
	*httptest.Server
	negotiates atomic.Int64
	mu         sync.Mutex
	fails      []string
}

type ntlmConnKey struct{}

// ntlmConn is one connection's handshake state.
type ntlmConn struct {
	challenged bool
	user       string // authenticated as
}

var ntlmServerChallenge = []byte{1, 2, 3, 4, 5, 6, 7, 8}

var ntlmUsers = map[string]string{`KNEE\ada`: "s3cret", `\bob`: "hunter2"}

func newNTLMServer(t *testing.T) *ntlmServer {
	t.Helper()
	s := &ntlmServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, ntlmConnKey{}, &ntlmConn{})
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *ntlmServer) fail(format string, args ...any) {
	s.mu.Lock()
	s.fails = append(s.fails, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *ntlmServer) serve(w http.ResponseWriter, r *http.Request) {
	c := r.Context().Value(ntlmConnKey{}).(*ntlmConn)
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "NTLM ")
	switch {
	case r.Header.Get("Authorization") == "" && c.user != "":
		fmt.Fprint(w, "hello ", c.user)
		return
	case r.Header.Get("Authorization") == "":
		w.Header().Add("WWW-Authenticate", `Basic realm="knee"`)
		w.Header().Add("WWW-Authenticate", "Negotiate")
		w.Header().Add("WWW-Authenticate", "NTLM")
		w.WriteHeader(http.StatusUnauthorized)
		return
	case !ok:
		s.fail("Authorization %q: not NTLM", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	msg, err := base64.StdEncoding.DecodeString(token)
	if err != nil || len(msg) < 16 || string(msg[:8]) != "NTLMSSP\x00" {
		s.fail("not an NTLM message: %q", token)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	switch binary.LittleEndian.Uint32(msg[8:]) {
	case 1:
		s.negotiates.Add(1)
		// NEGOTIATE_UNICODE and NEGOTIATE_NTLM must be asked for.
		if f := binary.LittleEndian.Uint32(msg[12:]); f&0x1 == 0 || f&0x200 == 0 {
			s.fail("NEGOTIATE flags %#x lack UNICODE or NTLM", f)
		}
		c.challenged = true
		w.Header().Set("WWW-Authenticate", "NTLM "+base64.StdEncoding.EncodeToString(ntlmChallenge()))
		w.WriteHeader(http.StatusUnauthorized)
	case 3:
		user, err := s.authenticate(c, msg)
		if err != nil {
			s.fail("%v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		c.user = user
		fmt.Fprint(w, "hello ", user)
	default:
		s.fail("message type %d", binary.LittleEndian.Uint32(msg[8:]))
		w.WriteHeader(http.StatusBadRequest)
	}
}

// ntlmChallenge is a CHALLENGE message (MS-NLMP 2.2.1.2): flags
// UNICODE, REQUEST_TARGET, NTLM, TARGET_TYPE_DOMAIN,
// EXTENDED_SESSIONSECURITY, TARGET_INFO; the target name KNEE; the target
// info's NetBIOS domain name and timestamp, then MsvAvEOL.
func ntlmChallenge() []byte {
	name := utf16le("KNEE")
	var info bytes.Buffer
	av := func(id uint16, v []byte) {
		binary.Write(&info, binary.LittleEndian, id)
		binary.Write(&info, binary.LittleEndian, uint16(len(v)))
		info.Write(v)
	}
	av(2, name)
	av(7, []byte{0, 0x80, 0x3e, 0xd5, 0xde, 0xb1, 0x9d, 0x01}) // a FILETIME
	av(0, nil)
	const head = 48
	var b bytes.Buffer
	b.WriteString("NTLMSSP\x00")
	binary.Write(&b, binary.LittleEndian, uint32(2))
	binary.Write(&b, binary.LittleEndian, []uint16{uint16(len(name)), uint16(len(name))})
	binary.Write(&b, binary.LittleEndian, uint32(head))
	binary.Write(&b, binary.LittleEndian, uint32(0x1|0x4|0x200|0x10000|0x80000|0x800000))
	b.Write(ntlmServerChallenge)
	b.Write(make([]byte, 8))
	binary.Write(&b, binary.LittleEndian, []uint16{uint16(info.Len()), uint16(info.Len())})
	binary.Write(&b, binary.LittleEndian, uint32(head+len(name)))
	b.Write(name)
	b.Write(info.Bytes())
	return b.Bytes()
}

// authenticate checks an AUTHENTICATE message (MS-NLMP 2.2.1.3) on c:
// the connection must have had the challenge; the NTLMv2 response is
// NTProofStr (16 bytes) and the client's blob, and NTProofStr must be
// HMAC-MD5 under NTOWFv2 of the server challenge and the blob (3.3.2),
// the blob carrying the challenge's target info.
func (s *ntlmServer) authenticate(c *ntlmConn, msg []byte) (string, error) {
	if !c.challenged {
		return "", fmt.Errorf("AUTHENTICATE on a connection that got no CHALLENGE: the handshake must keep its connection")
	}
	field := func(at int) ([]byte, error) {
		if len(msg) < at+8 {
			return nil, fmt.Errorf("AUTHENTICATE too short")
		}
		n, off := int(binary.LittleEndian.Uint16(msg[at:])), int(binary.LittleEndian.Uint32(msg[at+4:]))
		if off+n > len(msg) {
			return nil, fmt.Errorf("AUTHENTICATE field at %d out of the message", at)
		}
		return msg[off : off+n], nil
	}
	text := func(b []byte) string {
		u := make([]uint16, len(b)/2)
		binary.Read(bytes.NewReader(b), binary.LittleEndian, u)
		return string(utf16.Decode(u))
	}
	nt, err1 := field(20)
	domain, err2 := field(28)
	user, err3 := field(36)
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", err
	}
	who := text(domain) + `\` + text(user)
	pw, known := ntlmUsers[who]
	if !known {
		return "", fmt.Errorf("unknown user %q", who)
	}
	if len(nt) < 16+28 {
		return "", fmt.Errorf("NT response of %d bytes: not NTLMv2", len(nt))
	}
	proof, blob := nt[:16], nt[16:]
	if want := hmacMD5(ntowfV2(pw, text(user), text(domain)), ntlmServerChallenge, blob); !hmac.Equal(proof, want) {
		return "", fmt.Errorf("%s: NTProofStr %x; want %x", who, proof, want)
	}
	if !bytes.Contains(blob, ntlmChallenge()[56:]) {
		return "", fmt.Errorf("%s: the blob lacks the challenge's target info", who)
	}
	return strings.TrimPrefix(who, `\`), nil
}

// params auth: 'ntlm' as k6 runs it (go-ntlmssp's Negotiator over the VU's
// connections), worked out by hand for each row: with credentials, the
// request first goes without Authorization (401), then the NEGOTIATE
// (401 with the challenge), then the AUTHENTICATE: 3 requests on one
// connection, which is then authenticated, so a second request in the
// iteration is answered at once (1 request). k6 judges the first hop's
// 401 expected (its callback widened for that hop), the challenge's 401
// failed. A wrong password's AUTHENTICATE gets a 401: 2 failed. No
// credentials: one request, its 401 expected all the same (k6 widens the
// callback for auth 'ntlm' whatever the credentials).
func TestNTLMAuth(t *testing.T) {
	for _, tt := range []struct {
		name       string
		userinfo   string // in the URL
		header     string // an Authorization the script sets
		twice      bool   // a second request in the iteration
		status     int    // the (last) response's
		body       string
		reqs       int64
		failed     float64
		negotiates int64
		fails      string // what the server must have found wrong
	}{
		{"domain user from the URL", `KNEE%5Cada:s3cret@`, "", false, 200, `hello KNEE\ada`, 3, 1, 1, ""},
		{"the connection stays authenticated", `KNEE%5Cada:s3cret@`, "", true, 200, `hello KNEE\ada`, 4, 1, 1, ""},
		{"no domain", `bob:hunter2@`, "", false, 200, "hello bob", 3, 1, 1, ""},
		{"credentials from a Basic header", "", "Basic " + base64.StdEncoding.EncodeToString([]byte(`KNEE\ada:s3cret`)), false, 200, `hello KNEE\ada`, 3, 1, 1, ""},
		{"a wrong password", `KNEE%5Cada:nope@`, "", false, 401, "", 3, 2, 1, "NTProofStr"},
		{"no credentials", "", "", false, 401, "", 1, 0, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newNTLMServer(t)
			url := strings.Replace(srv.URL, "http://", "http://"+tt.userinfo, 1) + "/ntlm"
			s := loadScript(t, `import http from 'k6/http';
export default function () {
  const params = { auth: 'ntlm', headers: __ENV.HEADER ? { Authorization: __ENV.HEADER } : {} };
  let r = http.get(__ENV.URL, params);
  if (__ENV.TWICE) r = http.get(__ENV.URL, params);
  if (r.status !== Number(__ENV.STATUS) || r.body !== __ENV.BODY) throw new Error('status ' + r.status + ' body ' + r.body + ' ' + r.error);
  if (r.url.includes('@')) throw new Error('url shows the credentials: ' + r.url);
}`, map[string]string{"URL": url, "HEADER": tt.header, "TWICE": map[bool]string{true: "1"}[tt.twice],
				"STATUS": fmt.Sprint(tt.status), "BODY": tt.body})
			runWS(t, s, 1)
			if n, sum := k6Count(t, s, k6metric.HTTPReqFailed); n != tt.reqs || sum != tt.failed {
				t.Errorf("http_req_failed %v of %d; want %v of %d", sum, n, tt.failed, tt.reqs)
			}
			if n := srv.negotiates.Load(); n != tt.negotiates {
				t.Errorf("%d NEGOTIATE messages; want %d", n, tt.negotiates)
			}
			srv.mu.Lock()
			fails := strings.Join(srv.fails, "; ")
			srv.mu.Unlock()
			if tt.fails == "" && fails != "" || !strings.Contains(fails, tt.fails) {
				t.Errorf("the server found %q; want %q", fails, tt.fails)
			}
		})
	}
}
