package k6script

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"
)

// stapledServer is a loopback TLS server whose certificate, issued by a
// CA made here, staples the OCSP response made from tmpl (none when nil).
func stapledServer(t *testing.T, tmpl *ocsp.Response) *httptest.Server {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: key}
	if tmpl != nil {
		tmpl.SerialNumber = leafTmpl.SerialNumber
		if cert.OCSPStaple, err = ocsp.CreateResponse(ca, ca, *tmpl, caKey); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// res.ocsp as k6 fills it from the stapled response: Unix seconds, an
// absent time as Go's zero time (-62135596800 s), a good response's
// reason "unspecified"; no staple: status "unknown", the rest empty; over
// plain http:// all empty. produced_at is the responder's clock cut to
// the minute (x/crypto's CreateResponse), checked apart.
func TestResponseOCSP(t *testing.T) {
	this := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)  // 1767323045
	next := time.Date(2026, 1, 9, 3, 4, 5, 0, time.UTC)  // 1767927845
	rev := time.Date(2025, 12, 25, 0, 0, 0, 0, time.UTC) // 1766620800
	const zero = -62135596800                            // time.Time{}.Unix()
	type ocspJSON struct {
		ThisUpdate int64  `json:"this_update"`
		NextUpdate int64  `json:"next_update"`
		RevokedAt  int64  `json:"revoked_at"`
		Reason     string `json:"revocation_reason"`
		Status     string `json:"status"`
	}
	cases := []struct {
		name     string
		tmpl     *ocsp.Response
		plain    bool
		want     ocspJSON
		produced bool // produced_at set (else 0)
	}{
		{"good", &ocsp.Response{Status: ocsp.Good, ThisUpdate: this, NextUpdate: next},
			false, ocspJSON{1767323045, 1767927845, zero, "unspecified", "good"}, true},
		{"revoked, key compromise", &ocsp.Response{Status: ocsp.Revoked, ThisUpdate: this, NextUpdate: next, RevokedAt: rev, RevocationReason: ocsp.KeyCompromise},
			false, ocspJSON{1767323045, 1767927845, 1766620800, "key_compromise", "revoked"}, true},
		{"good without next update", &ocsp.Response{Status: ocsp.Good, ThisUpdate: this},
			false, ocspJSON{1767323045, zero, zero, "unspecified", "good"}, true},
		{"no staple", nil, false, ocspJSON{0, 0, 0, "", "unknown"}, false},
		{"plain http", nil, true, ocspJSON{0, 0, 0, "", ""}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var base string
			if c.plain {
				srv, _ := recordingServer(t)
				base = srv.URL
			} else {
				base = stapledServer(t, c.tmpl).URL
			}
			want, _ := json.Marshal(c.want)
			before := time.Now().Truncate(time.Minute).Unix()
			runHTTPOnce(t, `import http from 'k6/http';
export const options = { insecureSkipTLSVerify: true };
export default function () {
  const o = http.get(__ENV.BASE + '/').ocsp;
  const got = JSON.stringify({this_update: o.this_update, next_update: o.next_update, revoked_at: o.revoked_at, revocation_reason: o.revocation_reason, status: o.status});
  if (got !== __ENV.WANT) throw new Error('got ' + got + ' want ' + __ENV.WANT);
  const p = o.produced_at;
  if (__ENV.PRODUCED === 'true' ? (p % 60 !== 0 || p < Number(__ENV.BEFORE) || p > Date.now() / 1000) : p !== 0) throw new Error('produced_at ' + p);
  if (o.status && o.status !== http['OCSP_STATUS_' + o.status.toUpperCase()]) throw new Error('no constant for ' + o.status);
}`, map[string]string{"BASE": base, "WANT": string(want), "PRODUCED": strconv.FormatBool(c.produced), "BEFORE": strconv.FormatInt(before, 10)})
		})
	}
}
