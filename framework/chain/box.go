package chain

import "unsafe"

// eface is the runtime's layout of an interface value without methods
// (type word, data word), stable since Go 1.
type eface struct {
	typ, data unsafe.Pointer
}

// boxedBytes returns *p as an interface value whose data word points at p
// itself, where converting a []byte to any would copy the slice header to
// a fresh heap allocation. The value reads *p whenever it is used: p must
// not change while it is.
func boxedBytes(p *[]byte) any {
	var v any = []byte(nil) // the type word; a nil slice boxes without allocating
	(*eface)(unsafe.Pointer(&v)).data = unsafe.Pointer(p)
	return v
}
