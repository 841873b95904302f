package k6script

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/dop251/goja"
)

// The tag-specific methods k6/html's Element has on top of the generic
// ones (mod_html_element.go): which tag has which method and what each
// returns are k6 v1.8.1's (js/modules/k6/html/elements.go and the
// generated elements_gen.go); the code is ours. Most methods read one
// attribute in one of a few ways, so they are rows of tagAttrs; the rest
// (an anchor's hostname(), a select's options(), a row's cells(), …) are
// written out in tagMethods.

// tagAttrKind says how a method reads its attribute.
type tagAttrKind int

const (
	attrString          tagAttrKind = iota // the value; "" without the attribute
	attrBool                               // whether the attribute is there
	attrInt                                // the value as an integer; def without it or when it is not one
	attrURL                                // the value resolved against the document's URL; "" without it
	attrURLOrDoc                           // as attrURL, but the document's URL without it
	attrEnum                               // the value if it is one of vals, else vals[0]
	attrEnumOrUndefined                    // the value if it is one of vals, else undefined
	attrConst                              // vals[0], whatever the markup says
)

// tagAttr is one method that reads the attribute attr.
type tagAttr struct {
	method, attr string
	kind         tagAttrKind
	def          int // attrInt's default
	vals         []string
}

// The values k6 accepts for its enumerated attributes; the first is the
// default.
var (
	referrerPolicies = []string{"", "no-referrer", "no-referrer-when-downgrade", "origin", "origin-when-cross-origin", "unsafe-url"}
	autocompletes    = []string{"on", "off"}
	crossOrigins     = []string{"anonymous", "use-credentials"}
	encTypes         = []string{"application/x-www-form-urlencoded", "multipart/form-data", "text/plain"}
	inputTypes       = []string{"text", "button", "checkbox", "color", "date", "datetime-local", "email", "file", "hidden", "image", "month", "number", "password", "radio", "range", "reset", "search", "submit", "tel", "time", "url", "week"}
)

// Attributes some tags share: an anchor's and an area's, audio's and
// video's, del's and ins', a td's and a th's.
var (
	hrefAttrs = []tagAttr{
		{"download", "download", attrString, 0, nil},
		{"referrerPolicy", "referrerpolicy", attrEnum, 0, referrerPolicies},
		{"rel", "rel", attrString, 0, nil},
		{"href", "href", attrURL, 0, nil},
		{"target", "target", attrString, 0, nil},
		{"type", "type", attrString, 0, nil},
		{"accessKey", "accesskey", attrString, 0, nil},
		{"hrefLang", "hreflang", attrString, 0, nil},
		{"toString", "href", attrURL, 0, nil},
	}
	mediaAttrs = []tagAttr{
		{"autoplay", "autoplay", attrBool, 0, nil},
		{"controls", "controls", attrBool, 0, nil},
		{"loop", "loop", attrBool, 0, nil},
		{"muted", "muted", attrBool, 0, nil},
		{"preload", "preload", attrEnum, 0, []string{"auto", "metadata", "none"}},
		{"src", "src", attrURL, 0, nil},
		{"crossOrigin", "crossorigin", attrEnumOrUndefined, 0, crossOrigins},
		{"currentSrc", "src", attrString, 0, nil}, // not resolved, unlike src()
		{"defaultMuted", "muted", attrBool, 0, nil},
		{"mediaGroup", "mediagroup", attrString, 0, nil},
	}
	modAttrs = []tagAttr{
		{"cite", "cite", attrString, 0, nil},
		{"datetime", "datetime", attrString, 0, nil},
	}
	cellAttrs = []tagAttr{
		{"colSpan", "colspan", attrInt, 1, nil},
		{"rowSpan", "rowspan", attrInt, 1, nil},
		{"headers", "headers", attrString, 0, nil},
	}
)

// tagAttrs is, per tag, its methods that read one attribute.
var tagAttrs = map[string][]tagAttr{
	"a":     hrefAttrs,
	"area":  hrefAttrs,
	"audio": mediaAttrs,
	"video": mediaAttrs,
	"base": {
		{"href", "href", attrURLOrDoc, 0, nil},
		{"target", "target", attrString, 0, nil},
	},
	"button": {
		{"accessKey", "accesskey", attrString, 0, nil},
		{"autofocus", "autofocus", attrBool, 0, nil},
		{"disabled", "disabled", attrBool, 0, nil},
		{"tabIndex", "tabindex", attrInt, 0, nil},
		{"type", "type", attrEnum, 0, []string{"submit", "button", "menu", "reset"}},
	},
	"canvas": {
		{"width", "width", attrInt, 150, nil},
		{"height", "height", attrInt, 150, nil},
	},
	"data": {{"value", "value", attrString, 0, nil}},
	"del":  modAttrs,
	"ins":  modAttrs,
	"embed": {
		{"height", "height", attrString, 0, nil},
		{"width", "width", attrString, 0, nil},
		{"src", "src", attrString, 0, nil},
		{"type", "type", attrString, 0, nil},
	},
	"fieldset": {
		{"disabled", "disabled", attrBool, 0, nil},
		{"name", "name", attrString, 0, nil},
		{"type", "", attrConst, 0, []string{"fieldset"}},
	},
	"form": {
		{"action", "action", attrURL, 0, nil},
		{"name", "name", attrString, 0, nil},
		{"target", "target", attrString, 0, nil},
		{"enctype", "enctype", attrEnum, 0, encTypes},
		{"encoding", "enctype", attrEnum, 0, encTypes},
		{"acceptCharset", "accept-charset", attrString, 0, nil},
		{"autocomplete", "autocomplete", attrEnum, 0, autocompletes},
		{"noValidate", "novalidate", attrBool, 0, nil},
	},
	"iframe": {
		{"allowfullscreen", "allowfullscreen", attrBool, 0, nil},
		{"referrerPolicy", "referrerpolicy", attrEnum, 0, referrerPolicies},
		{"height", "height", attrString, 0, nil},
		{"width", "width", attrString, 0, nil},
		{"name", "name", attrString, 0, nil},
		{"src", "src", attrURL, 0, nil},
	},
	"img": {
		{"currentSrc", "src", attrURL, 0, nil},
		{"sizes", "sizes", attrString, 0, nil},
		{"srcset", "srcset", attrString, 0, nil},
		{"alt", "alt", attrString, 0, nil},
		{"crossOrigin", "crossorigin", attrEnumOrUndefined, 0, crossOrigins},
		{"height", "height", attrInt, 0, nil},
		{"width", "width", attrInt, 0, nil},
		{"isMap", "ismap", attrBool, 0, nil},
		{"name", "name", attrString, 0, nil},
		{"src", "src", attrURL, 0, nil},
		{"useMap", "usemap", attrString, 0, nil},
		{"referrerPolicy", "referrerpolicy", attrEnum, 0, referrerPolicies},
	},
	"input": {
		{"name", "name", attrString, 0, nil},
		{"tabIndex", "tabindex", attrInt, 0, nil},
		{"type", "type", attrEnum, 0, inputTypes},
		{"disabled", "disabled", attrBool, 0, nil},
		{"autofocus", "autofocus", attrBool, 0, nil},
		{"required", "required", attrBool, 0, nil},
		{"value", "value", attrString, 0, nil},
		{"checked", "checked", attrBool, 0, nil},
		{"defaultChecked", "checked", attrBool, 0, nil},
		{"alt", "alt", attrString, 0, nil},
		{"src", "src", attrURL, 0, nil},
		{"height", "height", attrString, 0, nil},
		{"width", "width", attrString, 0, nil},
		{"accept", "accept", attrString, 0, nil},
		{"autocomplete", "autocomplete", attrEnum, 0, autocompletes},
		{"maxLength", "maxlength", attrInt, -1, nil},
		{"size", "size", attrInt, 0, nil},
		{"pattern", "pattern", attrString, 0, nil},
		{"placeholder", "placeholder", attrString, 0, nil},
		{"readonly", "readonly", attrBool, 0, nil},
		{"min", "min", attrString, 0, nil},
		{"max", "max", attrString, 0, nil},
		{"defaultValue", "value", attrString, 0, nil},
		{"dirName", "dirname", attrString, 0, nil},
		{"accessKey", "accesskey", attrString, 0, nil},
		{"multiple", "multiple", attrBool, 0, nil},
		{"step", "step", attrString, 0, nil},
	},
	"keygen": {
		{"autofocus", "autofocus", attrBool, 0, nil},
		{"challenge", "challenge", attrString, 0, nil},
		{"disabled", "disabled", attrBool, 0, nil},
		{"keytype", "keytype", attrEnum, 0, []string{"RSA", "DSA", "EC"}},
		{"name", "name", attrString, 0, nil},
		{"type", "", attrConst, 0, []string{"keygen"}},
	},
	"label":  {{"htmlFor", "for", attrString, 0, nil}},
	"legend": {{"accessKey", "accesskey", attrString, 0, nil}},
	"li": {
		{"value", "value", attrInt, 0, nil},
		{"type", "type", attrEnum, 0, []string{"", "1", "a", "A", "i", "I", "disc", "square", "circle"}},
	},
	"link": {
		{"crossOrigin", "crossorigin", attrEnumOrUndefined, 0, crossOrigins},
		{"referrerPolicy", "referrerpolicy", attrEnum, 0, referrerPolicies},
		{"href", "href", attrURL, 0, nil},
		{"hreflang", "hreflang", attrString, 0, nil},
		{"media", "media", attrString, 0, nil},
		{"rel", "rel", attrString, 0, nil},
		{"target", "target", attrString, 0, nil},
		{"type", "type", attrString, 0, nil},
	},
	"map": {{"name", "name", attrString, 0, nil}},
	"meta": {
		{"content", "content", attrString, 0, nil},
		{"name", "name", attrString, 0, nil},
		{"httpEquiv", "http-equiv", attrEnum, 0, []string{"content-type", "default-style", "refresh"}},
	},
	"meter": {
		{"min", "min", attrInt, 0, nil},
		{"max", "max", attrInt, 0, nil},
		{"high", "high", attrInt, 0, nil},
		{"low", "low", attrInt, 0, nil},
		{"optimum", "optimum", attrInt, 0, nil},
	},
	"object": {
		{"data", "data", attrURL, 0, nil},
		{"height", "height", attrString, 0, nil},
		{"name", "name", attrString, 0, nil},
		{"type", "type", attrString, 0, nil},
		{"tabIndex", "tabindex", attrInt, 0, nil},
		{"typeMustMatch", "typemustmatch", attrBool, 0, nil},
		{"useMap", "usemap", attrString, 0, nil},
		{"width", "width", attrString, 0, nil},
	},
	"ol": {
		{"reversed", "reversed", attrBool, 0, nil},
		{"start", "start", attrInt, 0, nil},
		{"type", "type", attrEnum, 0, []string{"1", "a", "A", "i", "I"}},
	},
	"optgroup": {
		{"disabled", "disabled", attrBool, 0, nil},
		{"label", "label", attrString, 0, nil},
	},
	"option": {
		{"defaultSelected", "selected", attrBool, 0, nil},
		{"selected", "selected", attrBool, 0, nil},
	},
	"output": {
		{"htmlFor", "for", attrString, 0, nil},
		{"name", "name", attrString, 0, nil},
		{"type", "", attrConst, 0, []string{"output"}},
	},
	"param": {
		{"name", "name", attrString, 0, nil},
		{"value", "value", attrString, 0, nil},
	},
	"pre": {
		{"name", "name", attrString, 0, nil},
		{"value", "value", attrString, 0, nil},
	},
	"quote": {{"cite", "cite", attrString, 0, nil}},
	"script": {
		{"crossOrigin", "crossorigin", attrString, 0, nil},
		{"type", "type", attrString, 0, nil},
		{"src", "src", attrURL, 0, nil},
		{"charset", "charset", attrString, 0, nil},
		{"async", "async", attrBool, 0, nil},
		{"defer", "defer", attrBool, 0, nil},
		{"noModule", "nomodule", attrBool, 0, nil},
	},
	"select": {
		{"autofocus", "autofocus", attrBool, 0, nil},
		{"disabled", "disabled", attrBool, 0, nil},
		{"multiple", "multiple", attrBool, 0, nil},
		{"name", "name", attrString, 0, nil},
		{"required", "required", attrBool, 0, nil},
		{"tabIndex", "tabindex", attrInt, 0, nil},
	},
	"source": {
		{"keySystem", "keysystem", attrString, 0, nil},
		{"media", "media", attrString, 0, nil},
		{"sizes", "sizes", attrString, 0, nil},
		{"src", "src", attrURL, 0, nil},
		{"srcset", "srcset", attrString, 0, nil},
		{"type", "type", attrString, 0, nil},
	},
	"style": {{"media", "media", attrString, 0, nil}},
	"table": {{"sortable", "sortable", attrBool, 0, nil}},
	"td":    cellAttrs,
	"th": append(cellAttrs[:len(cellAttrs):len(cellAttrs)],
		tagAttr{"abbr", "abbr", attrString, 0, nil},
		tagAttr{"scope", "scope", attrEnum, 0, []string{"", "row", "col", "colgroup", "rowgroup"}},
		tagAttr{"sorted", "sorted", attrBool, 0, nil},
	),
	"textarea": {
		{"type", "", attrConst, 0, []string{"textarea"}},
		{"value", "value", attrString, 0, nil}, // the attribute, not the text inside, as in k6
		{"defaultValue", "value", attrString, 0, nil},
		{"placeholder", "placeholder", attrString, 0, nil},
		{"rows", "rows", attrInt, 0, nil},
		{"cols", "cols", attrInt, 0, nil},
		{"maxLength", "maxlength", attrInt, 0, nil},
		{"tabIndex", "tabindex", attrInt, 0, nil},
		{"accessKey", "accesskey", attrString, 0, nil},
		{"readOnly", "readonly", attrBool, 0, nil},
		{"required", "required", attrBool, 0, nil},
		{"autocomplete", "autocomplete", attrEnum, 0, autocompletes},
		{"autocapitalize", "autocapitalize", attrEnum, 0, []string{"sentences", "none", "off", "characters", "words"}},
		{"wrap", "wrap", attrEnum, 0, []string{"soft", "hard", "off"}},
	},
	"time": {{"datetime", "datetime", attrString, 0, nil}},
	"track": {
		{"kind", "kind", attrEnum, 0, []string{"subtitle", "captions", "descriptions", "chapters", "metadata"}},
		{"src", "src", attrURL, 0, nil},
		{"srclang", "srclang", attrString, 0, nil},
		{"label", "label", attrString, 0, nil},
		{"default", "default", attrBool, 0, nil},
	},
	"ul": {{"type", "type", attrString, 0, nil}},
}

// defaultPorts are the ports an anchor's host() leaves out.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ftp": "21"}

// tagElem is one element of a document whose URL is base ("" for
// parseHTML: URLs are then the attributes as written).
type tagElem struct {
	v    *vu
	sel  *goquery.Selection
	base string
}

// tagMethods sets on o the methods k6 gives an element of sel's tag. As
// k6, it goes by the node's Data whatever its type: a text node "a" gets
// an anchor's methods (which find no attributes).
func (v *vu) tagMethods(o *goja.Object, sel *goquery.Selection, base string) {
	e := tagElem{v: v, sel: sel, base: base}
	rt := v.rt
	set := func(name string, fn any) { must(o.Set(name, fn)) }
	tag := sel.Nodes[0].Data
	for _, a := range tagAttrs[tag] {
		set(a.method, e.attrMethod(a))
	}
	text := func() string { return sel.Text() }
	switch tag {
	case "a", "area":
		e.hrefMethods(set)
	case "button":
		e.formFieldMethods(set)
		set("value", func() string { return valueOrHTML(sel) })
	case "input":
		e.formFieldMethods(set)
		set("list", e.inputList)
	case "audio", "video":
		set("textTracks", func() goja.Value { return e.list(sel.Find("track")) })
	case "datalist":
		set("options", func() goja.Value { return e.list(sel.Find("option")) })
	case "fieldset":
		set("form", e.form)
		set("elements", func() goja.Value { return e.list(sel.Find("input,select,button,textarea")) })
		set("validity", goja.Undefined)
	case "form":
		const fields = "input,select,button,textarea,fieldset"
		set("elements", func() goja.Value { return e.list(sel.Find(fields)) })
		set("length", func() int { return sel.Find(fields).Length() })
		set("method", func() string {
			if e.attr("method") == "post" { // exactly: "POST" reads as get, as in k6
				return "post"
			}
			return "get"
		})
	case "keygen":
		set("form", e.form)
		set("labels", e.labels)
	case "meter":
		set("labels", e.labels)
	case "textarea":
		set("form", e.form)
		set("labels", e.labels)
		set("length", func() int { return len(e.attr("value")) }) // bytes of the attribute, as in k6
	case "label":
		set("control", func() goja.Value {
			id, ok := sel.Attr("for")
			if !ok {
				return goja.Undefined()
			}
			return e.elem(e.root().Find("#" + id))
		})
		set("form", e.form)
	case "legend", "object":
		set("form", e.form)
	case "link":
		set("relList", func() []string { return e.words("rel") })
	case "map":
		set("areas", func() goja.Value { return e.list(sel.Find("area")) })
		set("images", func() goja.Value {
			// k6 looks for the map's id only (its name fallback reads the id again).
			id, ok := sel.Attr("id")
			if !ok {
				return rt.NewArray()
			}
			return e.list(e.root().Find(`img[usemap="#` + id + `"],object[usemap="#` + id + `"]`))
		})
	case "option":
		e.optionMethods(set)
	case "output":
		set("form", e.form)
		set("labels", e.labels)
		set("value", text)
		set("defaultValue", text)
	case "progress":
		e.progressMethods(set)
	case "script", "title":
		set("text", text)
	case "select":
		e.selectMethods(set)
	case "style":
		set("type", func() string {
			if t := e.attr("type"); t != "" {
				return t
			}
			return "text/css"
		})
	case "table":
		child := func(name string) func() goja.Value {
			return func() goja.Value { return e.elem(sel.ChildrenFiltered(name)) }
		}
		set("caption", child("caption"))
		set("tHead", child("thead"))
		set("tFoot", child("tfoot"))
		set("rows", func() goja.Value { return e.list(sel.Find("tr")) })
		set("tBodies", func() goja.Value { return e.list(sel.Find("tbody")) })
	case "thead", "tbody", "tfoot":
		set("rows", func() goja.Value { return e.list(sel.Find("tr")) })
	case "td", "th":
		set("cellIndex", func() int { return e.indexIn("tr", "th,td") })
	case "tr":
		set("cells", func() goja.Value { return e.list(sel.Find("th,td")) })
		set("rowIndex", func() int { return e.indexIn("table", "tr") })
		set("sectionRowIndex", func() int { return e.indexIn("thead,tbody,tfoot", "tr") })
	case "col":
		set("span", func() int { return max(e.intAttr("span", 1), 1) })
	}
}

// attrMethod is the method a reads its attribute with.
func (e tagElem) attrMethod(a tagAttr) func() goja.Value {
	rt := e.v.rt
	return func() goja.Value {
		val, ok := e.sel.Attr(a.attr)
		switch a.kind {
		case attrBool:
			return rt.ToValue(ok)
		case attrInt:
			return rt.ToValue(e.intAttr(a.attr, a.def))
		case attrURL:
			return rt.ToValue(e.urlAttr(a.attr, ""))
		case attrURLOrDoc:
			return rt.ToValue(e.urlAttr(a.attr, e.base))
		case attrEnum:
			if ok && slices.Contains(a.vals, val) {
				return rt.ToValue(val)
			}
			return rt.ToValue(a.vals[0])
		case attrEnumOrUndefined:
			if ok && slices.Contains(a.vals, val) {
				return rt.ToValue(val)
			}
			return goja.Undefined()
		case attrConst:
			return rt.ToValue(a.vals[0])
		}
		return rt.ToValue(val) // attrString: "" without the attribute
	}
}

func (e tagElem) attr(name string) string { s, _ := e.sel.Attr(name); return s }

func (e tagElem) intAttr(name string, def int) int {
	s, ok := e.sel.Attr(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

// resolve resolves ref against the document's URL.
func (e tagElem) resolve(ref string) (*url.URL, bool) {
	b, err := url.Parse(e.base)
	if err != nil {
		return nil, false
	}
	r, err := url.Parse(ref)
	if err != nil {
		return nil, false
	}
	return b.ResolveReference(r), true
}

// urlAttr is the attribute resolved against the document's URL, or
// missing without the attribute (or one that is not a URL). Without a
// document URL it is the attribute as written.
func (e tagElem) urlAttr(name, missing string) string {
	val, ok := e.sel.Attr(name)
	if e.base == "" {
		return val
	}
	if !ok {
		return missing
	}
	u, ok := e.resolve(val)
	if !ok {
		return missing
	}
	return u.String()
}

// words is the attribute split at each space; none for an empty one.
func (e tagElem) words(name string) []string {
	s := e.attr(name)
	if s == "" {
		return []string{}
	}
	return strings.Split(s, " ")
}

// elem is the Element of sel's first node; list, of each of its nodes.
func (e tagElem) elem(sel *goquery.Selection) goja.Value { return e.v.element(sel, e.base) }

func (e tagElem) list(sel *goquery.Selection) goja.Value {
	out := make([]any, sel.Length())
	for i := range out {
		out[i] = e.elem(sel.Eq(i))
	}
	return e.v.rt.NewArray(out...)
}

// root is where k6 looks elements up by id: the element's outermost
// ancestor.
func (e tagElem) root() *goquery.Selection { return e.sel.Parents().Last() }

// ownerForm is the form around the element, else the one its form
// attribute names by id.
func (e tagElem) ownerForm() (*goquery.Selection, bool) {
	if f := e.sel.Closest("form"); f.Length() > 0 {
		return f, true
	}
	id := e.attr("form")
	if id == "" {
		return nil, false
	}
	f := e.root().Find("#" + id)
	return f, f.Length() > 0
}

func (e tagElem) form() goja.Value {
	f, ok := e.ownerForm()
	if !ok {
		return goja.Undefined()
	}
	return e.elem(f)
}

// labels are the label around the element, then those whose for names
// its id.
func (e tagElem) labels() goja.Value {
	around := e.sel.Closest("label")
	id := e.attr("id")
	if id == "" {
		return e.list(around)
	}
	return e.list(around.AddSelection(e.root().Find(`label[for="` + id + `"]`)))
}

// indexIn is the element's index among the items of its nearest holder
// ancestor, -1 without one.
func (e tagElem) indexIn(holder, items string) int {
	h := e.sel.ParentsFiltered(holder)
	if h.Length() == 0 {
		return -1
	}
	return h.Find(items).IndexOfSelection(e.sel)
}

// valueOrHTML is an option's or a button's value: its value attribute,
// else its inner HTML.
func valueOrHTML(sel *goquery.Selection) string {
	if val, ok := sel.Attr("value"); ok {
		return val
	}
	h, err := sel.Html()
	if err != nil {
		return ""
	}
	return h
}

// hrefMethods are an anchor's and an area's methods on their href's parts.
func (e tagElem) hrefMethods(set func(string, any)) {
	href := func() *url.URL {
		val, ok := e.sel.Attr("href")
		if !ok {
			return &url.URL{}
		}
		u, ok := e.resolve(val)
		if !ok {
			return &url.URL{}
		}
		return u
	}
	set("hash", func() string {
		if f := href().Fragment; f != "" {
			return "#" + f
		}
		return ""
	})
	set("host", func() string {
		u := href()
		host, port, err := net.SplitHostPort(u.Host)
		if def := defaultPorts[u.Scheme]; err != nil || def == "" || port != def {
			return u.Host
		}
		return host
	})
	set("hostname", func() string {
		u := href()
		host, _, err := net.SplitHostPort(u.Host)
		if err != nil {
			return u.Host
		}
		return host
	})
	set("port", func() string {
		_, port, err := net.SplitHostPort(href().Host)
		if err != nil {
			return ""
		}
		return port
	})
	set("username", func() string {
		if u := href().User; u != nil {
			return u.Username()
		}
		return ""
	})
	set("password", func() string {
		if u := href().User; u != nil {
			p, _ := u.Password()
			return p
		}
		return ""
	})
	set("origin", func() string {
		u := href()
		switch u.Scheme {
		case "":
			return ""
		case "file":
			return e.urlAttr("href", "")
		}
		return u.Scheme + "://" + u.Host // the port kept, even a default one, as in k6
	})
	set("pathname", func() string { return href().Path })
	set("protocol", func() string { // the scheme without its colon, as in k6
		if s := href().Scheme; s != "" {
			return s
		}
		return ":"
	})
	set("relList", func() []string { return e.words("rel") })
	set("search", func() string {
		if q := href().RawQuery; q != "" {
			return "?" + q
		}
		return ""
	})
	set("text", func() string { return e.sel.Text() })
}

// formFieldMethods are a button's and an input's: their form, and the
// form's settings unless the field's own form* attributes override them.
func (e tagElem) formFieldMethods(set func(string, any)) {
	formAttr := func(name string) (string, bool) {
		if val, ok := e.sel.Attr("form" + name); ok {
			return val, true
		}
		f, ok := e.ownerForm()
		if !ok {
			return "", false
		}
		return f.Attr(name)
	}
	set("form", e.form)
	set("formAction", func() string {
		action, ok := formAttr("action")
		switch {
		case e.base == "":
			return action
		case !ok || action == "":
			return e.base
		}
		u, ok := e.resolve(action)
		if !ok {
			return action
		}
		return u.String()
	})
	set("formEnctype", func() string {
		t, _ := formAttr("enctype")
		if t == "multipart/form-data" || t == "text/plain" {
			return t
		}
		return "application/x-www-form-urlencoded"
	})
	set("formMethod", func() string {
		m, _ := formAttr("method")
		if strings.ToLower(m) == "post" {
			return "post"
		}
		return "get"
	})
	set("formNoValidate", func() bool { _, ok := formAttr("novalidate"); return ok })
	set("formTarget", func() string { t, _ := formAttr("target"); return t })
	set("labels", e.labels)
	set("name", func() string { return e.attr("name") })
}

// inputList is the datalist an input's list attribute names, for the
// input types that can have one.
func (e tagElem) inputList() goja.Value {
	id := e.attr("list")
	if id == "" {
		return goja.Undefined()
	}
	switch e.attr("type") {
	case "hidden", "checkbox", "radio", "file", "button":
		return goja.Undefined()
	}
	return e.elem(e.root().Find(`datalist[id="` + id + `"]`))
}

func (e tagElem) optionMethods(set func(string, any)) {
	sel := e.sel
	set("disabled", func() bool {
		if _, ok := sel.Attr("disabled"); ok {
			return true
		}
		_, ok := sel.ParentsFiltered("optgroup").Attr("disabled")
		return ok
	})
	set("form", func() goja.Value {
		if f := sel.ParentsFiltered("form"); f.Length() > 0 {
			return e.elem(f)
		}
		s := sel.ParentsFiltered("select")
		id, ok := s.Attr("form")
		if !ok {
			return goja.Undefined()
		}
		return e.elem(s.Parents().Last().Find("form#" + id))
	})
	set("index", func() int {
		h := sel.ParentsFiltered("select,datalist")
		if h.Length() == 0 {
			return 0
		}
		return h.Find("option").IndexOfSelection(sel)
	})
	set("label", func() string {
		if l, ok := sel.Attr("label"); ok {
			return l
		}
		return sel.Text()
	})
	set("text", func() string { return sel.Text() })
	set("value", func() string { return valueOrHTML(sel) })
}

func (e tagElem) progressMethods(set func(string, any)) {
	limit := func() float64 {
		s, ok := e.sel.Attr("max")
		if !ok {
			return 1
		}
		m, err := strconv.ParseFloat(s, 64)
		if err != nil || m < 0 {
			return 1
		}
		return m
	}
	// fraction is value/max, or def without a valid value.
	fraction := func(def float64) float64 {
		s, ok := e.sel.Attr("value")
		if !ok {
			return def
		}
		val, err := strconv.ParseFloat(s, 64)
		if err != nil || val < 0 {
			return def
		}
		return val / limit()
	}
	set("max", limit)
	set("value", func() float64 { return fraction(0) })
	set("position", func() float64 { return fraction(-1) })
	set("labels", e.labels)
}

func (e tagElem) selectMethods(set func(string, any)) {
	sel := e.sel
	_, multiple := sel.Attr("multiple")
	set("form", e.form)
	set("labels", e.labels)
	set("length", func() int { return sel.Find("option").Length() })
	set("options", func() goja.Value { return e.list(sel.Find("option")) })
	set("selectedIndex", func() int {
		chosen := sel.Find("option[selected]")
		if chosen.Length() == 0 {
			return -1
		}
		return sel.Find("option").IndexOfSelection(chosen)
	})
	set("selectedOptions", func() goja.Value { return e.list(sel.Find("option[selected]")) })
	set("size", func() int {
		if multiple {
			return 4
		}
		return 1
	})
	set("type", func() string {
		if multiple {
			return "select-multiple"
		}
		return "select"
	})
	set("value", func() string {
		chosen := sel.Find("option[selected]")
		if chosen.Length() == 0 {
			return ""
		}
		return valueOrHTML(chosen.First())
	})
}
