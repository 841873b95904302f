package fault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
)

// fakeFreezer logs Freeze and Thaw calls with their times since t0.
type fakeFreezer struct {
	name      string
	t0        time.Time
	log       *[]string
	freezeErr error
	frozen    bool
}

func (f *fakeFreezer) Freeze(ctx context.Context) error {
	*f.log = append(*f.log, fmt.Sprintf("%v freeze %s", time.Since(f.t0), f.name))
	if f.freezeErr != nil {
		return f.freezeErr
	}
	f.frozen = true
	return nil
}

func (f *fakeFreezer) Thaw() error {
	*f.log = append(*f.log, fmt.Sprintf("%v thaw %s", time.Since(f.t0), f.name))
	f.frozen = false
	return nil
}

func (f *fakeFreezer) String() string { return f.name }

func TestScheduleTimesAndEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var log []string
		a := &fakeFreezer{name: "a", t0: t0, log: &log}
		b := &fakeFreezer{name: "b", t0: t0, log: &log}
		bad := &fakeFreezer{name: "bad", t0: t0, log: &log, freezeErr: errors.New("boom")}
		faults := []Fault{
			{At: 5 * time.Second, For: 5 * time.Second, Freezer: a},
			{At: 2 * time.Second, For: 4 * time.Second, Freezer: b}, // overlaps a: another target
			{At: 10 * time.Second, For: time.Second, Freezer: a},    // starts as the first ends
			{At: 3 * time.Second, For: time.Second, Freezer: bad},
		}
		var events []string
		err := Scheduler{}.Run(context.Background(), t0, faults, func(ev Event) {
			events = append(events, fmt.Sprintf("%v %s %d %v", ev.At, ev.Kind, ev.Fault, ev.Err != nil))
		})
		if err == nil || !strings.Contains(err.Error(), "freeze bad: boom") {
			t.Errorf("Run = %v, want the failed freeze", err)
		}
		wantLog := []string{
			"2s freeze b", "3s freeze bad", "3s thaw bad", "5s freeze a", "6s thaw b",
			"10s thaw a", "10s freeze a", "11s thaw a",
		}
		if !reflect.DeepEqual(log, wantLog) {
			t.Errorf("calls:\n%q\nwant\n%q", log, wantLog)
		}
		wantEvents := []string{
			"2s freeze 1 false", "3s freeze 3 true", "5s freeze 0 false", "6s thaw 1 false",
			"10s thaw 0 false", "10s freeze 2 false", "11s thaw 2 false",
		}
		if !reflect.DeepEqual(events, wantEvents) {
			t.Errorf("events:\n%q\nwant\n%q", events, wantEvents)
		}
	})
}

func TestScheduleThawsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var log []string
		f := &fakeFreezer{name: "api", t0: t0, log: &log}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second) // Ctrl-C at 3 s
		defer cancel()
		err := Scheduler{}.Run(ctx, t0, []Fault{{At: time.Second, For: time.Minute, Freezer: f}}, nil)
		if err != nil {
			t.Errorf("Run = %v, want nil on cancel", err)
		}
		if want := []string{"1s freeze api", "3s thaw api"}; !reflect.DeepEqual(log, want) || f.frozen {
			t.Errorf("calls %q, frozen %v; want %q and thawed", log, f.frozen, want)
		}
	})
}

func TestScheduleThawsOnPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var log []string
		f := &fakeFreezer{name: "api", t0: t0, log: &log}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("want the panic to propagate")
				}
			}()
			_ = Scheduler{}.Run(context.Background(), t0, []Fault{{At: time.Second, For: time.Minute, Freezer: f}},
				func(ev Event) {
					if ev.Kind == "freeze" {
						panic("bug in the caller")
					}
				})
		}()
		if f.frozen || len(log) != 2 || log[1] != "1s thaw api" {
			t.Errorf("after panic: calls %q, frozen %v; want thawed at once", log, f.frozen)
		}
	})
}

func TestValidateFaults(t *testing.T) {
	a := &fakeFreezer{name: "a"}
	tests := []struct {
		name   string
		faults []Fault
		want   []string
	}{
		{"ok", []Fault{{At: 0, For: time.Second, Freezer: a}, {At: time.Second, For: time.Second, Freezer: a}}, nil},
		{"no target", []Fault{{For: time.Second}}, []string{"fault 0: no target"}},
		{"negative at", []Fault{{At: -time.Second, For: time.Second, Freezer: a}}, []string{"fault 0: at -1s is before the start"}},
		{"zero for", []Fault{{Freezer: a}}, []string{"fault 0: for 0s must be positive"}},
		{"overlap", []Fault{{At: 0, For: 2 * time.Second, Freezer: a}, {At: time.Second, For: time.Second, Freezer: a}},
			[]string{"fault 1 overlaps fault 0 on a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, err := range ValidateFaults(tt.faults) {
				got = append(got, err.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if tt.want != nil {
				if err := (Scheduler{}).Run(context.Background(), time.Now(), tt.faults, nil); err == nil {
					t.Error("Run accepted invalid faults")
				}
			}
		})
	}
}

func readState(t *testing.T, dir string) []StateEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc stateDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Frozen
}

func TestScheduleRecordsStateWhileFrozen(t *testing.T) {
	cg, err := NewCgroup(fakeV1(t), "state")
	if err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(t.TempDir(), "state")
	synctest.Test(t, func(t *testing.T) {
		var during []StateEntry
		err := Scheduler{StateDir: stateDir}.Run(context.Background(), time.Now(),
			[]Fault{{At: time.Second, For: 2 * time.Second, Freezer: cg}}, func(ev Event) {
				if ev.Kind == "freeze" {
					during = readState(t, stateDir)
				}
				if ev.Method != "cgroup-v1-freezer" || ev.Target != cg.Dir() {
					t.Errorf("event %+v: want method and target of the cgroup", ev)
				}
			})
		if err != nil {
			t.Fatal(err)
		}
		if len(during) != 1 || during[0].Method != MethodV1Freezer || during[0].Path != cg.Dir() || during[0].Owner != os.Getpid() {
			t.Errorf("state while frozen = %+v", during)
		}
	})
	if after := readState(t, stateDir); len(after) != 0 {
		t.Errorf("state after thaw = %+v, want empty", after)
	}
	if got := readFile(t, cg.Dir()+"/freezer.state"); got != "THAWED" {
		t.Errorf("freezer.state = %q", got)
	}
}

func TestThawAllFake(t *testing.T) {
	proc := fakeProcTree(t, []fakeProc{
		{pid: 10, ppid: 1, comm: "knee", start: 500},   // a knee still running
		{pid: 30, ppid: 1, comm: "reused", start: 999}, // PID 30 now names another process
	})
	v1 := fakeV1(t)
	frozenV1 := filepath.Join(v1.V1["freezer"], "knee/dead")
	kneetest.WriteFiles(t, frozenV1, map[string]string{"freezer.state": "FROZEN"})
	v2 := fakeV2(t, "cpu")
	frozenV2 := filepath.Join(v2.V2, "knee/dead")
	kneetest.WriteFiles(t, frozenV2, map[string]string{"cgroup.freeze": "1"})
	keptV2 := filepath.Join(v2.V2, "knee/alive")
	kneetest.WriteFiles(t, keptV2, map[string]string{"cgroup.freeze": "1"})

	entries := []StateEntry{
		{Method: MethodV1Freezer, Path: frozenV1, Owner: 11, OwnerStart: 1},                         // owner dead → thaw
		{Method: MethodV2Freeze, Path: frozenV2, Owner: 10, OwnerStart: 400},                        // PID 10 reused → thaw
		{Method: MethodV2Freeze, Path: keptV2, Owner: 10, OwnerStart: 500},                          // owner alive → keep
		{Method: MethodSIGSTOP, PID: 30, PIDStart: 700, Owner: 11},                                  // target PID reused → gone
		{Method: MethodV1Freezer, Path: filepath.Join(v1.V1["freezer"], "knee/removed"), Owner: 11}, // cgroup gone
	}
	stateDir := t.TempDir()
	for _, e := range entries {
		if err := addEntry(stateDir, e); err != nil {
			t.Fatal(err)
		}
	}
	results, err := thawAll(stateDir, proc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range results {
		got = append(got, r.Action)
	}
	if want := []string{"thawed", "thawed", "kept", "gone", "gone"}; !reflect.DeepEqual(got, want) {
		t.Errorf("actions %q, want %q", got, want)
	}
	if readFile(t, frozenV1+"/freezer.state") != "THAWED" || readFile(t, frozenV2+"/cgroup.freeze") != "0" ||
		readFile(t, keptV2+"/cgroup.freeze") != "1" {
		t.Error("wrong cgroups thawed")
	}
	if left := readState(t, stateDir); len(left) != 1 || left[0].Path != keptV2 {
		t.Errorf("state left = %+v, want only the running knee's entry", left)
	}
}

func TestDefaultStateDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "/x/state/knee"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/knee"},
	}
	for _, tt := range tests {
		if got, err := DefaultStateDir(env(tt.env)); err != nil || got != tt.want {
			t.Errorf("DefaultStateDir(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
	if _, err := DefaultStateDir(env(nil)); err == nil {
		t.Error("DefaultStateDir without HOME: want an error")
	}
}
