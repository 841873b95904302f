package k6script

import (
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/dop251/goja"
)

// htmlModule is "k6/html": parseHTML, and the Selection it returns (also
// res.html()), with jQuery's traversal as k6 has it (goquery, the library
// k6 uses): find, children, parent, closest, next, prev, filter, is, first,
// last, eq, get, size, each, map, toArray, attr, text, html, val.
func htmlModule(v *vu) *goja.Object {
	o := v.rt.NewObject()
	must(o.Set("parseHTML", func(src string) *goja.Object { return v.parseHTML(src) }))
	return o
}

// parseHTML parses src as an HTML document and returns its Selection.
func (v *vu) parseHTML(src string) *goja.Object { return v.selection(v.parseDoc(src), "") }

func (v *vu) parseDoc(src string) *goquery.Selection {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(src))
	if err != nil { // the parser takes any text; only a reader's error gets here
		panic(v.rt.NewGoError(fmt.Errorf("parseHTML: %w", err)))
	}
	return doc.Selection
}

// selection is k6's Selection of sel. base is the URL of the document
// (res.url; "" for parseHTML), against which Elements resolve URLs.
func (v *vu) selection(sel *goquery.Selection, base string) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	sub := func(s *goquery.Selection) *goja.Object { return v.selection(s, base) }
	elem := func(s *goquery.Selection) goja.Value { return v.element(s, base) }
	str := func(val goja.Value) string {
		if val == nil || goja.IsUndefined(val) || goja.IsNull(val) {
			return ""
		}
		return val.String()
	}
	// nav wraps a traversal that takes an optional selector.
	nav := func(name string, all func() *goja.Object, filtered func(string) *goja.Object) {
		must(o.Set(name, func(call goja.FunctionCall) goja.Value {
			if s := str(call.Argument(0)); s != "" {
				return filtered(s)
			}
			return all()
		}))
	}
	must(o.Set("find", func(s string) *goja.Object { return sub(sel.Find(s)) }))
	nav("children", func() *goja.Object { return sub(sel.Children()) }, func(s string) *goja.Object { return sub(sel.ChildrenFiltered(s)) })
	nav("parent", func() *goja.Object { return sub(sel.Parent()) }, func(s string) *goja.Object { return sub(sel.ParentFiltered(s)) })
	nav("next", func() *goja.Object { return sub(sel.Next()) }, func(s string) *goja.Object { return sub(sel.NextFiltered(s)) })
	nav("prev", func() *goja.Object { return sub(sel.Prev()) }, func(s string) *goja.Object { return sub(sel.PrevFiltered(s)) })
	must(o.Set("closest", func(s string) *goja.Object { return sub(sel.Closest(s)) }))
	must(o.Set("filter", func(s string) *goja.Object { return sub(sel.Filter(s)) }))
	must(o.Set("is", func(s string) bool { return sel.Is(s) }))
	must(o.Set("first", func() *goja.Object { return sub(sel.First()) }))
	must(o.Set("last", func() *goja.Object { return sub(sel.Last()) }))
	must(o.Set("eq", func(i int) *goja.Object { return sub(sel.Eq(i)) }))
	// get and each hand out k6's Element (mod_html_element.go), as k6 does;
	// map and toArray hand out Selections.
	must(o.Set("get", func(call goja.FunctionCall) goja.Value {
		if goja.IsUndefined(call.Argument(0)) {
			out := make([]any, sel.Length())
			for i := range out {
				out[i] = elem(sel.Eq(i))
			}
			return rt.NewArray(out...)
		}
		i := int(call.Argument(0).ToInteger())
		if i >= sel.Length() || i <= -sel.Length() {
			return goja.Undefined()
		}
		return elem(sel.Eq(i))
	}))
	must(o.Set("size", func() int { return sel.Length() }))
	must(o.Set("toArray", func() goja.Value {
		out := make([]any, 0, sel.Length())
		sel.Each(func(_ int, s *goquery.Selection) { out = append(out, sub(s)) })
		return rt.NewArray(out...)
	}))
	must(o.Set("attr", func(call goja.FunctionCall) goja.Value {
		if val, ok := sel.Attr(str(call.Argument(0))); ok {
			return rt.ToValue(val)
		}
		if def := call.Argument(1); !goja.IsUndefined(def) {
			return def
		}
		return goja.Undefined()
	}))
	must(o.Set("text", func() string { return sel.Text() }))
	must(o.Set("html", func() goja.Value {
		h, err := sel.Html()
		if err != nil || sel.Length() == 0 {
			return goja.Undefined()
		}
		return rt.ToValue(h)
	}))
	must(o.Set("val", func() goja.Value {
		switch {
		case sel.Is("select"):
			return rt.ToValue(sel.Find("option[selected]").AttrOr("value", sel.Find("option").First().AttrOr("value", "")))
		case sel.Is("textarea"):
			return rt.ToValue(sel.Text())
		}
		if val, ok := sel.Attr("value"); ok {
			return rt.ToValue(val)
		}
		return goja.Undefined()
	}))
	each := func(fn goja.Callable, keep bool) []any {
		var out []any
		sel.EachWithBreak(func(i int, s *goquery.Selection) bool {
			var item goja.Value = sub(s)
			if !keep {
				item = elem(s)
			}
			r, err := fn(goja.Undefined(), rt.ToValue(i), item)
			if err != nil {
				panic(err)
			}
			if keep && r != nil && !goja.IsUndefined(r) && !goja.IsNull(r) {
				out = append(out, r)
			}
			return keep || r == nil || r.ToBoolean() || goja.IsUndefined(r) // each stops when fn returns false
		})
		return out
	}
	must(o.Set("each", func(fn goja.Callable) *goja.Object { each(fn, false); return o }))
	must(o.Set("map", func(fn goja.Callable) goja.Value { return rt.NewArray(each(fn, true)...) }))
	// A one-element Selection stands for k6's Element too.
	must(o.Set("textContent", func() string { return sel.Text() }))
	must(o.Set("getAttribute", func(name string) goja.Value {
		if val, ok := sel.Attr(name); ok {
			return rt.ToValue(val)
		}
		return goja.Null()
	}))
	must(o.Set("innerHTML", func() string { h, _ := sel.Html(); return h }))
	must(o.Set("nodeName", func() string { return strings.ToLower(goquery.NodeName(sel)) }))
	return o
}
