package k6script

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// res.remote_ip and res.remote_port are the connection's peer, as k6's
// (httpext updateK6Response from the trail's ConnRemoteAddr): the server's
// own address, over the lean http:// client, over TLS and after a
// redirect; "" and 0 when no connection was had.
func TestResponseRemoteAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
		path string
	}{
		{"plain http", false, "/"},
		{"a redirect's last hop", false, "/hop"},
		{"https", true, "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/hop" {
					http.Redirect(w, r, "/", http.StatusFound)
				}
			}))
			if tc.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			runHTTPOnce(t, `import http from 'k6/http';
export const options = { insecureSkipTLSVerify: true };
export default function () {
  const r = http.get(__ENV.URL);
  if (r.status !== 200 || r.remote_ip !== __ENV.HOST || r.remote_port !== Number(__ENV.PORT)) {
    throw new Error('got ' + r.status + ' ' + r.remote_ip + ' ' + r.remote_port);
  }
  const none = http.get('http://127.0.0.1:1/');
  if (none.remote_ip !== '' || none.remote_port !== 0) {
    throw new Error('refused: ' + none.remote_ip + ' ' + none.remote_port);
  }
}`, map[string]string{"URL": srv.URL + tc.path, "HOST": host, "PORT": port})
		})
	}
}
