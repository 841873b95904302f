package scenario

import (
	"reflect"
	"testing"
	"time"
)

func TestRunMeta(t *testing.T) {
	cfg, err := Parse("s.yaml", []byte(fullFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := cfg.Scenarios[0].RunMeta()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"duration":"1m0s","executor":"constant-arrival-rate","gracefulStop":"10s","maxVUs":2000,"preAllocatedVUs":50,"rate":200,"timeUnit":"1s"}`
	if string(m.Config) != want {
		t.Errorf("Config %s\nwant   %s", m.Config, want)
	}
	if m.Executor != ConstantArrivalRate || m.Model != "open" || m.TargetRate != 200 || m.VUs != 0 || m.Span != time.Minute {
		t.Errorf("meta %+v", m)
	}
	if !reflect.DeepEqual(m.Requests, []string{"GET /api/books/{isbn}", "http://127.0.0.1:5080/api/books"}) {
		t.Errorf("requests %q", m.Requests)
	}
	closed, _ := cfg.Scenarios[1].RunMeta()
	if closed.Think != 100*time.Millisecond || closed.VUs != 20 || closed.TargetRate != 0 {
		t.Errorf("closed meta %+v", closed)
	}
}

// The recorded settings are scenario-file syntax: read back, they give the
// same executor.
func TestRunMetaReadsBack(t *testing.T) {
	cfg, err := Parse("s.yaml", []byte(fullFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range cfg.Scenarios {
		m, err := sc.RunMeta()
		if err != nil {
			t.Fatal(err)
		}
		doc := "scenarios:\n  x: " + string(m.Config[:len(m.Config)-1]) + `,"requests":[{"url":"http://h/"}]}`
		back, err := Parse("back.yaml", []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc.Name, err, doc)
		}
		if !reflect.DeepEqual(back.Scenarios[0].Executor, sc.Executor) || back.Scenarios[0].GracefulStop != sc.GracefulStop {
			t.Errorf("%s: read back %+v, want %+v", sc.Name, back.Scenarios[0].Executor, sc.Executor)
		}
	}
}
