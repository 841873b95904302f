package record

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	runtime.LockOSThread()
	r := NewRecorder(time.Now())
	sh := r.Shard()
	smp := Sample{Key: Key{Scenario: "default", Name: "GET http://127.0.0.1:8080/"}, Latency: 1500 * time.Microsecond, Service: 1200 * time.Microsecond, SendLag: 300 * time.Microsecond, Status: 200}
	for k := 0; k < 5; k++ {
		c0 := threadCPU()
		const n = 3000000
		for i := 0; i < n; i++ {
			smp.Latency++
			sh.Record(smp)
		}
		t.Logf("%.1f ns CPU/op", float64(threadCPU()-c0)/n)
	}
}
