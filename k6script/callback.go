package k6script

import (
	"errors"
	"fmt"

	"github.com/dop251/goja"

	"github.com/knee-dev/knee/request"
)

// statusSet is what http.expectedStatuses returns: the statuses a response
// callback accepts, as codes and inclusive ranges.
type statusSet struct {
	codes  map[int]bool
	ranges [][2]int
}

func (s *statusSet) has(status int) bool {
	if s.codes[status] {
		return true
	}
	for _, r := range s.ranges {
		if status >= r[0] && status <= r[1] {
			return true
		}
	}
	return false
}

// responseCallback is the callback in force for a request: set says one
// was given (by http.setResponseCallback or the responseCallback param);
// a nil set then means null, k6's way of turning the check off.
type responseCallback struct {
	set      bool
	statuses *statusSet
}

// verdict is the callback's judgement of a reply, as load.Result.Expected:
// 0 when no callback was given (k6's default rule applies), 1 expected,
// -1 not. With the check turned off every response is expected.
func (c responseCallback) verdict(rep *request.Reply) int8 {
	switch {
	case !c.set:
		return 0
	case c.statuses == nil || c.statuses.has(rep.Status):
		return 1
	}
	return -1
}

// expectedStatuses is http.expectedStatuses(200, {min: 300, max: 399}, ...).
func (v *vu) expectedStatuses(call goja.FunctionCall) goja.Value {
	rt := v.rt
	s := &statusSet{codes: map[int]bool{}}
	for i, a := range call.Arguments {
		switch x := a.Export().(type) {
		case int64:
			s.codes[int(x)] = true
			continue
		case float64:
			if x == float64(int(x)) {
				s.codes[int(x)] = true
				continue
			}
		case map[string]any:
			lo, ok1 := x["min"]
			hi, ok2 := x["max"]
			if ok1 && ok2 {
				from, to := rt.ToValue(lo).ToInteger(), rt.ToValue(hi).ToInteger()
				if from <= to {
					s.ranges = append(s.ranges, [2]int{int(from), int(to)})
					continue
				}
			}
		}
		panic(rt.NewGoError(fmt.Errorf("http.expectedStatuses: argument %d (%s) is neither a status code nor {min: N, max: M}", i+1, a.String())))
	}
	return rt.ToValue(s)
}

// callbackParam reads params.responseCallback: what http.expectedStatuses
// returned, or null; anything else is k6's error (js/modules/k6/http/
// request.go:384-391).
func callbackParam(val goja.Value) (responseCallback, error) {
	if goja.IsNull(val) {
		return responseCallback{set: true}, nil
	}
	if s, ok := val.Export().(*statusSet); ok {
		return responseCallback{set: true, statuses: s}, nil
	}
	return responseCallback{}, errors.New("unsupported responseCallback")
}

// callbackValue reads a response callback: what http.expectedStatuses
// returned, or null.
func (v *vu) callbackValue(val goja.Value, where string) responseCallback {
	if goja.IsNull(val) {
		return responseCallback{set: true}
	}
	if s, ok := val.Export().(*statusSet); ok {
		return responseCallback{set: true, statuses: s}
	}
	panic(v.rt.NewGoError(fmt.Errorf("%s: give http.expectedStatuses(...) or null; knee runs no other response callback", where)))
}
