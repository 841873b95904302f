package k6script

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/dop251/goja"
)

// submitForm is res.submitForm({formSelector, fields, submitSelector,
// params}) as k6 v1.x has it: the form (default "form") found in the body;
// its method attribute upper-cased, GET without one; its action resolved
// against the response's URL, the URL itself without one; its fields as
// k6/html's serializeObject collects them (formFields), the submit
// button's name and value (default selector [type="submit"]) added, then
// fields given overriding; sent as a request of its own (it counts as
// one) with params: GET with the values as the query (the action's own
// query replaced), any other method with them form-encoded as the body.
func (r *responseObject) submitForm(call goja.FunctionCall) goja.Value {
	rt := r.v.rt
	formSel, submitSel := "form", `[type="submit"]`
	var fields map[string]goja.Value
	params := goja.Null()
	if a := call.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
		o := a.ToObject(rt)
		for _, k := range o.Keys() {
			switch k {
			case "formSelector":
				formSel = o.Get(k).String()
			case "submitSelector":
				submitSel = o.Get(k).String()
			case "fields":
				if rt.ExportTo(o.Get(k), &fields) != nil {
					fields = nil // k6 ignores fields it cannot read as an object
				}
			case "params":
				params = o.Get(k)
			}
		}
	}
	form := r.v.parseDoc(r.htmlText()).Find(formSel)
	if form.Length() == 0 {
		panic(rt.NewGoError(fmt.Errorf("no form found for selector '%s' in response '%s'", formSel, r.rep.URL)))
	}
	method := http.MethodGet
	if m, ok := form.Attr("method"); ok {
		method = strings.ToUpper(m)
	}
	target, err := url.Parse(r.rep.URL)
	if err != nil {
		panic(rt.NewGoError(err))
	}
	if action, ok := form.Attr("action"); ok {
		a, err := url.Parse(action)
		if err != nil {
			panic(rt.NewGoError(err))
		}
		target = target.ResolveReference(a)
	}
	values := map[string]goja.Value{}
	jsValue := func(val any) goja.Value {
		if val == nil {
			return goja.Undefined()
		}
		return rt.ToValue(val)
	}
	for k, val := range formFields(form) {
		values[k] = jsValue(val)
	}
	submit := form.Find(submitSel)
	if name, ok := submit.Attr("name"); ok {
		if val, ok := formValue(submit); ok {
			values[name] = jsValue(val)
		}
	}
	for k, val := range fields {
		values[k] = val
	}
	if method == http.MethodGet {
		q := url.Values{}
		for k, val := range values {
			q.Add(k, val.String()) // JavaScript's String(): a list "a,b", "undefined"
		}
		target.RawQuery = q.Encode()
		return r.v.httpRequest(method, rt.ToValue(target.String()), goja.Null(), params)
	}
	body := make(map[string]any, len(values))
	for k, val := range values {
		x := val.Export()
		switch x.(type) {
		case nil, map[string]any: // k6 sends an empty value for these
			x = ""
		}
		body[k] = x // a []string (select multiple) goes as Go prints it, "[a b]", as in k6
	}
	return r.v.httpRequest(method, rt.ToValue(target.String()), rt.ToValue(body), params)
}

// formFields are the values k6/html's serializeObject takes from sel (a
// form's controls, or sel's own): input, select, textarea and keygen
// elements with a non-empty name, not disabled="disabled", not of type
// submit, button, reset, image or file, a checkbox or radio only when
// checked="checked" (k6 compares the attributes' values, so a bare
// checked or disabled does not count), each by formValue (a later one of
// the same name wins).
func formFields(sel *goquery.Selection) map[string]any {
	const controls = "input,select,textarea,keygen"
	els := sel.Filter(controls)
	if sel.Is("form") {
		els = sel.Find(controls)
	}
	out := map[string]any{}
	els.Each(func(_ int, el *goquery.Selection) {
		name := el.AttrOr("name", "")
		typ := el.AttrOr("type", "")
		switch {
		case name == "", el.AttrOr("disabled", "") == "disabled":
			return
		case typ == "submit" || typ == "button" || typ == "reset" || typ == "image" || typ == "file":
			return
		case (typ == "checkbox" || typ == "radio") && el.AttrOr("checked", "") != "checked":
			return
		}
		val, _ := formValue(el)
		out[name] = val
	})
	return out
}

// formValue is k6/html's val() of sel's first element: an input's value
// ("on" for a checkbox or radio without one, else ""), a button's value or
// "", a textarea's inner HTML (entities escaped), an option's value or
// inner HTML, a select's option[selected] the same way (a list of them
// when multiple; "" when none is marked: no default to the first), and
// nothing (false) for any other element.
func formValue(sel *goquery.Selection) (any, bool) {
	switch goquery.NodeName(sel) {
	case "input":
		if v, ok := sel.Attr("value"); ok {
			return v, true
		}
		if t := sel.AttrOr("type", ""); t == "radio" || t == "checkbox" {
			return "on", true
		}
		return "", true
	case "button":
		return sel.AttrOr("value", ""), true
	case "textarea":
		h, err := sel.Html()
		if err != nil {
			return nil, true // k6: undefined
		}
		return h, true
	case "option":
		return optionValue(sel), true
	case "select":
		chosen := sel.First().Find("option[selected]")
		if _, ok := sel.Attr("multiple"); ok {
			vals := make([]string, 0, chosen.Length())
			chosen.Each(func(_ int, o *goquery.Selection) { vals = append(vals, optionValue(o)) })
			return vals, true
		}
		return optionValue(chosen), true
	}
	return nil, false
}

// optionValue is an option's value attribute, else its inner HTML.
func optionValue(o *goquery.Selection) string {
	if v, ok := o.Attr("value"); ok {
		return v
	}
	h, _ := o.Html()
	return h
}
