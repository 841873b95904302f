package k6script

import (
	"slices"

	"github.com/dop251/goja"
)

// lazyObject is an object whose members become JavaScript values when the
// script first reads each. A function member costs every VU about 0.4 KB
// as a goja function (its object, name and length), and a script reads a
// few of a module's tens: k6/http's 40 members cost ~15 KB per VU made
// at once. A module builds one as it would a goja object (Set, then object).
type lazyObject struct {
	rt      *goja.Runtime
	members []lazyMember
	made    map[string]goja.Value // what the script read or set, by name
	added   []string              // names the script set that no member has, in order
	deleted map[string]bool
}

type lazyMember struct {
	name string
	val  any // a Go value as goja.Runtime.ToValue takes it
}

func newLazyObject(rt *goja.Runtime) *lazyObject { return &lazyObject{rt: rt} }

// Set adds a member; it is made a JavaScript value when first read. It
// never fails: its error is goja.Object.Set's, so builders read alike.
func (o *lazyObject) Set(name string, val any) error {
	o.members = append(o.members, lazyMember{name, val})
	return nil
}

// object is the JavaScript object: plain writable, enumerable,
// configurable data properties, as goja.Object.Set makes them.
func (o *lazyObject) object() *goja.Object { return o.rt.NewDynamicObject(lazyProps{o}) }

// lazyProps is lazyObject as goja's DynamicObject (whose Set differs
// from the builder's).
type lazyProps struct{ o *lazyObject }

func (p lazyProps) Get(key string) goja.Value {
	o := p.o
	if v, ok := o.made[key]; ok {
		return v
	}
	if o.deleted[key] {
		return nil
	}
	i := slices.IndexFunc(o.members, func(m lazyMember) bool { return m.name == key })
	if i < 0 {
		return nil
	}
	v := o.rt.ToValue(o.members[i].val)
	p.keep(key, v) // the same value at every read: http.get === http.get
	return v
}

func (p lazyProps) keep(key string, v goja.Value) {
	if p.o.made == nil {
		p.o.made = map[string]goja.Value{}
	}
	p.o.made[key] = v
}

func (p lazyProps) Set(key string, val goja.Value) bool {
	if !p.Has(key) && !slices.ContainsFunc(p.o.members, func(m lazyMember) bool { return m.name == key }) {
		p.o.added = append(p.o.added, key)
	}
	delete(p.o.deleted, key)
	p.keep(key, val)
	return true
}

func (p lazyProps) Has(key string) bool {
	o := p.o
	if _, ok := o.made[key]; ok {
		return true
	}
	return !o.deleted[key] && slices.ContainsFunc(o.members, func(m lazyMember) bool { return m.name == key })
}

func (p lazyProps) Delete(key string) bool {
	o := p.o
	if !p.Has(key) {
		return true
	}
	delete(o.made, key)
	if i := slices.Index(o.added, key); i >= 0 {
		o.added = slices.Delete(o.added, i, i+1)
		return true
	}
	if o.deleted == nil {
		o.deleted = map[string]bool{}
	}
	o.deleted[key] = true
	return true
}

func (p lazyProps) Keys() []string {
	var keys []string
	for _, m := range p.o.members {
		if !p.o.deleted[m.name] {
			keys = append(keys, m.name)
		}
	}
	return append(keys, p.o.added...)
}
