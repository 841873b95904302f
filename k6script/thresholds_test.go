package k6script

import "testing"

// k6 writes JavaScript's === and !==; on numbers they are == and !=, and
// the expression keeps what the script wrote.
func TestParseOwnStrictEquality(t *testing.T) {
	for _, tt := range []struct{ expr, op string }{{"count===3", "=="}, {"count!==3", "!="}, {"count==3", "=="}, {"count<=3", "<="}} {
		th, err := parseOwn("c", KindCounter, tt.expr)
		if err != nil || th.Op != tt.op || th.Expr != "c: "+tt.expr || th.Value != 3 {
			t.Errorf("%s: %+v, %v; want op %s", tt.expr, th, err, tt.op)
		}
	}
}
