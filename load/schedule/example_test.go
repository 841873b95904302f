package schedule_test

import (
	"fmt"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

// An open-model schedule is the intended start of every iteration, counted
// from t0: 200 per second for 1 minute is 12,000 iterations, the i-th at
// i × 5 ms, so it cannot drift however late any one start is.
func ExampleNewConstant() {
	s, err := schedule.NewConstant(200, time.Second, time.Minute)
	if err != nil {
		panic(err)
	}
	for _, i := range []int64{0, 1, 199, 11999, 12000} {
		at, ok := s.Offset(i)
		fmt.Println(i, at, ok)
	}
	fmt.Println(s.Iterations(), "iterations")
	// Output:
	// 0 0s true
	// 1 5ms true
	// 199 995ms true
	// 11999 59.995s true
	// 12000 0s false
	// 12000 iterations
}

// A ramp from 0 to 100/s over 10 s starts 500 iterations (the area under
// the rate, 100 × 10 / 2), iteration i when that area reaches i: 5t² = i,
// so t = √(i/5): iteration 5 at 1 s, 20 at 2 s, 405 at 9 s.
func ExampleNewRamping() {
	s, err := schedule.NewRamping(0, time.Second, []schedule.Stage{{Duration: 10 * time.Second, Target: 100}})
	if err != nil {
		panic(err)
	}
	for _, i := range []int64{5, 20, 405} {
		at, _ := s.Offset(i)
		fmt.Println(i, at)
	}
	fmt.Println(s.Iterations(), "iterations,", s.Rate(5*time.Second), "/s at 5 s")
	// Output:
	// 5 1s
	// 20 2s
	// 405 9s
	// 500 iterations, 50 /s at 5 s
}
