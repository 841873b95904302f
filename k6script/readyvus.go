package k6script

import "sync"

// readyVUs are runtimes made ahead for load's VU ids (Prepare's and
// KeepSpares'), each running its init code with its id's __VU, as k6's
// VUs do (internal/js/bundle.go:415 sets __VU to the VU's id before the
// init code runs), until the VU of that id takes it. load numbers its VUs
// 1, 2, ... in the order it starts them, so spares are made for the ids
// after the last one made.
type readyVUs struct {
	mu   sync.Mutex
	byID map[uint64]*vu
	// claimed are the ids a VU made its own runtime for (none was ready):
	// a spare is never made for them, nor kept if it was being made.
	claimed map[uint64]bool
	next    uint64 // the id the next spare is made for
}

// count is how many runtimes are ready.
func (r *readyVUs) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byID)
}

// reserve is the id the next spare is made for.
func (r *readyVUs) reserve() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == 0 {
		r.next = 1
	}
	for r.claimed[r.next] || r.byID[r.next] != nil {
		r.next++
	}
	id := r.next
	r.next++
	return id
}

// put keeps v ready for id; false when a VU of that id has claimed its
// own runtime meanwhile (v is then not kept).
func (r *readyVUs) put(id uint64, v *vu) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.claimed[id] {
		return false
	}
	if r.byID == nil {
		r.byID = map[uint64]*vu{}
	}
	r.byID[id] = v
	return true
}

// take is id's ready runtime, or nil, in which case id is claimed: the
// caller makes its own.
func (r *readyVUs) take(id uint64) *vu {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.byID[id]; ok {
		delete(r.byID, id)
		return v
	}
	if r.claimed == nil {
		r.claimed = map[uint64]bool{}
	}
	r.claimed[id] = true
	return nil
}

// drain takes every ready runtime.
func (r *readyVUs) drain() []*vu {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*vu, 0, len(r.byID))
	for _, v := range r.byID {
		out = append(out, v)
	}
	r.byID = nil
	return out
}
