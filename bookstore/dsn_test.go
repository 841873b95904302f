package bookstore

import (
	"net/url"
	"os"
	"strings"
	"testing"
)

// Every form of PostgreSQL DSN opens PostgreSQL; everything else is a
// SQLite file path, including paths that hold an "=" later on.
func TestIsPostgres(t *testing.T) {
	tests := []struct {
		dsn  string
		want bool
	}{
		{"postgres://knee:knee@127.0.0.1:5432/knee", true},
		{"postgresql://127.0.0.1/knee?sslmode=disable", true},
		{"host=127.0.0.1 port=5432 user=knee password=pw dbname=knee sslmode=disable", true},
		{"  dbname=knee", true},
		{"user = knee host=/run/postgresql", true},
		{"bookstore.db", false},
		{"/tmp/a=b/bookstore.db", false},
		{"./hostname=x.db", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isPostgres(tt.dsn); got != tt.want {
			t.Errorf("isPostgres(%q) = %v, want %v", tt.dsn, got, tt.want)
		}
	}
}

// knee lab serve --db 'host=... user=... dbname=...' serves from that
// PostgreSQL server (it used to create a SQLite file of that name).
func TestKeywordValueDSNOpensPostgres(t *testing.T) {
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		t.Skip(postgresSkip)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	kv := []string{"host=" + u.Hostname(), "port=" + u.Port(), "dbname=" + strings.TrimPrefix(u.Path, "/")}
	if user := u.User.Username(); user != "" {
		kv = append(kv, "user="+user)
	}
	if pw, ok := u.User.Password(); ok {
		kv = append(kv, "password="+pw)
	}
	if mode := u.Query().Get("sslmode"); mode != "" {
		kv = append(kv, "sslmode="+mode)
	}
	s := newTestServer(t, Options{DB: strings.Join(kv, " ")})
	if s.store.d.name != postgresDialect().name {
		t.Errorf("store dialect %q, want PostgreSQL's", s.store.d.name)
	}
}
