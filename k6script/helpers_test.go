package k6script

import (
	"context"
	"fmt"
	"os"
	"testing"
)

func sprint(v any) string { return fmt.Sprintf("%T%+v", v, v) }

func loadScriptB(b *testing.B, src string, env map[string]string) *Script {
	b.Helper()
	dir := b.TempDir()
	path := dir + "/s.js"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := Load(context.Background(), path, Config{Env: env})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}
