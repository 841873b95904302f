package analyze_test

import (
	"fmt"

	"github.com/knee-dev/knee/analyze"
)

// The article's page: 20 API calls, each slow with probability 1 %, makes
// 1 − 0.99²⁰ ≈ 18 % of pages slow. p99 is not "one user in a hundred".
func ExamplePageTail() {
	p, err := analyze.PageTail(0.01, 20)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.1f %%\n", 100*p)
	// Output: 18.2 %
}

// Thresholds are parsed once, with every mistake reported and a fix; a
// latency without a unit is milliseconds, as in k6.
func ExampleParseThreshold() {
	for _, expr := range []string{"p(99)<250", "{name:GET /books}p(95)<=1s", "errors<1%", "p(99)<2 fortnights"} {
		t, err := analyze.ParseThreshold(expr)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(t.String())
	}
	// Output:
	// p(99)<250ms
	// {name:GET /books}p(95)<=1000ms
	// errors<0.01
	// error: threshold "p(99)<2 fortnights": unknown unit "fortnights"; write a duration such as 200ms, 1.5s or 800us (a bare number means ms)
}
