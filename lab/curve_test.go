package lab_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/lab"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/use"
)

// kneeExecutable makes the test binary the knee the lab starts as the
// Bookstore (TestMain in co_test.go).
func kneeExecutable(t *testing.T) string {
	t.Helper()
	t.Setenv(asKnee, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// The curve experiment end to end with a tiny plan: two short steps at
// 50 and 100 req/s. It must measure both steps, say where the knee is or
// that there is none, write the plots and measure the Bookstore's CPU.
func TestCurveExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the experiment takes about 15 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "curve")
	res, err := lab.Curve(ctx, lab.CurveOptions{
		Start: 50, Step: 50, Steps: 2, StepDuration: 3 * time.Second, Warmup: time.Second,
		Out: dir, Executable: kneeExecutable(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || res.Steps[0].OfferedRate != 50 || res.Steps[1].OfferedRate != 100 {
		t.Fatalf("steps %+v, want 50 and 100 req/s", res.Steps)
	}
	if res.Knee.Reason == "" || (res.Knee.LastHealthyRate == 0 && res.Knee.FirstUnhealthyRate == 0) {
		t.Errorf("knee %+v: neither placed nor stated absent", res.Knee)
	}
	for _, name := range []string{"curve.png", "curve.svg", "timeline.png", "timeline.svg"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", name, err)
		}
	}
	if res.USE == nil || res.Bottleneck == nil || len(res.StepUSE) != 2 {
		t.Fatalf("USE table %v, verdict %v, %d step tables: want all", res.USE, res.Bottleneck, len(res.StepUSE))
	}
	cpu, ok := res.USE.Row(use.TargetCPU)
	if u, measured := cpu.Utilization.Headline(); !ok || !measured || u.Mean <= 0 {
		t.Errorf("target CPU row %+v: utilization not measured", cpu)
	}
	var out bytes.Buffer
	if err := report.PrintSteps(&out, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"offered/s", "knee:", "capacity:", "target CPU", "verdict:", "curve.png"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed result lacks %q:\n%s", want, out.String())
		}
	}
}

// The pool experiment with two steps: a database serving one query at a
// time for 10 ms serves at most 100 req/s. At 80 req/s it keeps up (with
// knee's evenly spaced arrivals little or no queue forms); at 140 req/s
// it cannot, requests queue for it holding their connections, the
// 20-connection pool fills and requests time out. The verdict names the
// database; the API's CPU stays well under its limit; the pool saturates
// too, at the same step or later.
func TestPoolExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the experiment takes about 20 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := lab.Pool(ctx, lab.PoolOptions{CurveOptions: lab.CurveOptions{
		Start: 80, Step: 60, Steps: 2, StepDuration: 5 * time.Second, Warmup: 2 * time.Second,
		Out: filepath.Join(t.TempDir(), "pool"), Executable: kneeExecutable(t),
	}})
	if err != nil {
		t.Fatal(err)
	}
	v := res.Bottleneck
	if v == nil || v.Bottleneck != use.Database {
		t.Fatalf("verdict %+v, want the database", v)
	}
	cpu, _ := res.USE.Row(use.TargetCPU)
	if u, ok := cpu.Utilization.Headline(); !ok || u.Max >= use.DefaultUtilizationLimit {
		t.Errorf("API CPU %+v: want measured and well below its limit", u)
	}
	pool, _ := res.StepUSE[1].Row(use.ConnPool)
	if len(use.DefaultThresholds().Signals(pool)) == 0 {
		t.Errorf("connection pool at 140 req/s not saturated: %+v", pool)
	}
	if !strings.Contains(strings.Join(append(res.Then, v.SetAside...), "\n"), "connection pool") {
		t.Errorf("then %q, set aside %q: want the pool saturating with or after the database", res.Then, v.SetAside)
	}
}
