package configdef

import "fmt"

// Def is an ordered set of key definitions.
type Def struct {
	keys  []Key
	index map[string]int
}

// New returns an empty definition set.
func New() *Def { return &Def{index: map[string]int{}} }

// Define adds a key and returns d for chaining. Defining the same name twice
// is a programming error and panics, as does a key without a name or type.
func (d *Def) Define(k Key) *Def {
	if k.Name == "" || k.Type == "" {
		panic(fmt.Sprintf("configdef: key %q needs a name and a type", k.Name))
	}
	if _, dup := d.index[k.Name]; dup {
		panic(fmt.Sprintf("configdef: key %q defined twice", k.Name))
	}
	d.index[k.Name] = len(d.keys)
	d.keys = append(d.keys, k)
	return d
}

// Keys returns the definitions in the order they were defined.
func (d *Def) Keys() []Key { return append([]Key(nil), d.keys...) }

// Key returns the definition of name.
func (d *Def) Key(name string) (Key, bool) {
	i, ok := d.index[name]
	if !ok {
		return Key{}, false
	}
	return d.keys[i], true
}
