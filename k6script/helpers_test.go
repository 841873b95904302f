package k6script

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
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

// iterateOnce runs one iteration of s's default function on VU 1, made
// then as the load makes its VUs, and returns its samples.
func iterateOnce(t *testing.T, s *Script) *samples {
	t.Helper()
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	got := &samples{}
	it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Called: time.Now()}, got)
	return got
}
