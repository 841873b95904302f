package k6script

import (
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/dop251/goja"
	"golang.org/x/net/html"
)

// Node types as the DOM numbers them (k6 returns these from nodeType()).
const (
	elementNode  = 1
	textNode     = 3
	commentNode  = 8
	documentNode = 9
	doctypeNode  = 10
)

// element is k6/html's Element for the first node of sel: what get(i),
// each() and the Element's own traversals hand a script. The methods,
// their names and their results for a missing node (undefined) follow
// k6's js/modules/k6/html/element.go; an element also gets the methods
// of its tag (href(), value(), rows(), …; mod_html_tags.go). base is the
// document's URL, which those resolve URLs against.
func (v *vu) element(sel *goquery.Selection, base string) goja.Value {
	if sel.Length() == 0 || sel.Nodes[0] == nil {
		return goja.Undefined()
	}
	rt := v.rt
	n := sel.Nodes[0]
	sel = sel.First()
	o := rt.NewObject()
	set := func(name string, fn any) { must(o.Set(name, fn)) }
	// node is the Element of one node reached from n (a child, a sibling).
	one := func(m *html.Node) *goquery.Selection {
		s := sel.Slice(0, 0)
		s.Nodes = []*html.Node{m} // a fresh slice: Slice's shares sel's array
		return s
	}
	node := func(m *html.Node) goja.Value {
		if m == nil {
			return goja.Undefined()
		}
		return v.element(one(m), base)
	}
	list := func(s *goquery.Selection) goja.Value {
		out := make([]any, s.Length())
		for i := range out {
			out[i] = v.element(s.Eq(i), base)
		}
		return rt.NewArray(out...)
	}
	attr := func(name string) (string, bool) { return sel.Attr(name) }
	orUndefined := func(val string, ok bool) goja.Value {
		if !ok {
			return goja.Undefined()
		}
		return rt.ToValue(val)
	}
	other := func(val goja.Value) (*html.Node, bool) {
		ob, ok := val.(*goja.Object)
		if !ok {
			return nil, false
		}
		m, ok := ob.Get("\x00node").Export().(*html.Node)
		return m, ok
	}
	// The node, hidden from scripts' view of the fields, for isSameNode,
	// isEqualNode and contains.
	must(o.DefineDataProperty("\x00node", rt.ToValue(n), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))

	set("id", func() string { s, _ := attr("id"); return s })
	set("className", func() goja.Value { return orUndefined(attr("class")) })
	set("classList", func() goja.Value {
		if c, ok := attr("class"); ok {
			return rt.ToValue(strings.Fields(c))
		}
		return rt.ToValue([]string(nil)) // what k6's nil slice becomes
	})
	set("getAttribute", func(name string) goja.Value { return orUndefined(attr(name)) })
	set("hasAttribute", func(name string) bool { _, ok := attr(name); return ok })
	set("hasAttributes", func() bool { return len(n.Attr) > 0 })
	set("getAttributeNode", func(name string) goja.Value {
		for _, a := range n.Attr {
			if a.Key == name {
				return v.attribute(o, a)
			}
		}
		return goja.Undefined()
	})
	set("attributes", func() *goja.Object {
		m := rt.NewObject()
		for _, a := range n.Attr {
			must(m.Set(a.Key, v.attribute(o, a)))
		}
		return m
	})
	set("toString", func() string {
		if n.Type == html.ElementNode {
			return "[object html.Node]"
		}
		return fmt.Sprintf("[object %s]", goquery.NodeName(sel))
	})
	set("hasChildNodes", func() bool { return n.FirstChild != nil })
	set("textContent", func() string { return sel.Text() })
	set("innerHTML", func() goja.Value {
		h, err := sel.Html()
		if err != nil {
			return goja.Undefined()
		}
		return rt.ToValue(h)
	})
	set("nodeName", func() string { return goquery.NodeName(sel) })
	set("nodeType", func() goja.Value {
		switch n.Type {
		case html.ElementNode:
			return rt.ToValue(elementNode)
		case html.TextNode:
			return rt.ToValue(textNode)
		case html.CommentNode:
			return rt.ToValue(commentNode)
		case html.DocumentNode:
			return rt.ToValue(documentNode)
		case html.DoctypeNode:
			return rt.ToValue(doctypeNode)
		}
		return goja.Undefined()
	})
	set("nodeValue", func() goja.Value {
		if n.Type == html.TextNode || n.Type == html.CommentNode {
			return rt.ToValue(sel.Text())
		}
		return goja.Undefined()
	})
	set("lang", func() goja.Value {
		for _, a := range n.Attr {
			if a.Key == "lang" && a.Namespace == "" {
				return rt.ToValue(a.Val)
			}
		}
		return goja.Undefined()
	})
	set("namespaceURI", func() string { return namespaceURI(n.Namespace) })
	set("isDefaultNamespace", func() bool { return n.Namespace == "" })
	set("firstChild", func() goja.Value { return node(n.FirstChild) })
	set("lastChild", func() goja.Value { return node(n.LastChild) })
	set("previousSibling", func() goja.Value { return node(n.PrevSibling) })
	set("nextSibling", func() goja.Value { return node(n.NextSibling) })
	set("parentNode", func() goja.Value { return node(n.Parent) })
	set("parentElement", func() goja.Value { return v.element(sel.Parent(), base) })
	set("firstElementChild", func() goja.Value { return v.element(sel.Children().First(), base) })
	set("lastElementChild", func() goja.Value { return v.element(sel.Children().Last(), base) })
	set("previousElementSibling", func() goja.Value { return v.element(sel.Prev(), base) })
	set("nextElementSibling", func() goja.Value { return v.element(sel.Next(), base) })
	set("ownerDocument", func() goja.Value {
		m := n
		for m != nil && m.Type != html.DocumentNode {
			m = m.Parent
		}
		return node(m)
	})
	set("childNodes", func() goja.Value { return list(sel.Contents()) })
	set("children", func() goja.Value { return list(sel.Children()) })
	set("childElementCount", func() int { return sel.Children().Length() })
	set("getElementsByClassName", func(name string) goja.Value { return list(sel.Find("." + name)) })
	set("getElementsByTagName", func(name string) goja.Value { return list(sel.Find(name)) })
	set("querySelector", func(s string) goja.Value { return v.element(sel.Find(s), base) })
	set("querySelectorAll", func(s string) goja.Value { return list(sel.Find(s)) })
	set("matches", func(s string) bool { return sel.Is(s) })
	set("selection", func() *goja.Object { return v.selection(sel, base) })
	set("isSameNode", func(val goja.Value) bool { m, ok := other(val); return ok && m == n })
	set("isEqualNode", func(val goja.Value) bool {
		m, ok := other(val)
		if !ok {
			return false
		}
		a, errA := sel.Html()
		b, errB := one(m).Html()
		return errA == nil && errB == nil && a == b
	})
	set("contains", func(val goja.Value) bool {
		m, ok := other(val)
		return ok && m != n && sel.Contains(m)
	})
	v.tagMethods(o, sel, base)
	return o
}

// attribute is k6/html's Attribute: owner_element, name and value, with
// prefix(), namespaceURI() and localName().
func (v *vu) attribute(owner *goja.Object, a html.Attribute) *goja.Object {
	o := v.rt.NewObject()
	must(o.Set("owner_element", owner))
	must(o.Set("name", a.Key))
	must(o.Set("value", a.Val))
	must(o.Set("prefix", func() string { return a.Namespace }))
	must(o.Set("namespaceURI", func() string { return namespaceURI(a.Namespace) }))
	must(o.Set("localName", func() string { return a.Key }))
	return o
}

// namespaceURI maps the parser's namespace prefix to its URI as k6 does.
func namespaceURI(prefix string) string {
	switch prefix {
	case "svg":
		return "http://www.w3.org/2000/svg"
	case "math":
		return "http://www.w3.org/1998/Math/MathML"
	}
	return "http://www.w3.org/1999/xhtml"
}
