package k6script

import "fmt"

func sprint(v any) string { return fmt.Sprintf("%T%+v", v, v) }
