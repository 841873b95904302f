package request

import "github.com/knee-dev/knee/load"

var _ load.VUReleaser = (*Sender)(nil)

// ReleaseVU closes vu's idle connection of the lean client, which the load
// generator calls when it retires an idle VU; a later request of vu dials
// a new one. The net/http transport's connections are shared by every VU:
// its own idle limits (MaxIdleConnsPerHost, IdleConnTimeout) bound them.
// The lean client's buffers are pooled per Sender, not per VU.
func (s *Sender) ReleaseVU(vu uint64) {
	if s.lean != nil {
		s.lean.release(vu)
	}
}

// release closes vu's idle connection, if vu has a slot and it holds one.
// It never grows the slots.
func (p *leanPool) release(vu uint64) {
	if slots := *p.slots.Load(); vu < uint64(len(slots)) {
		if c := slots[vu].c.Swap(nil); c != nil {
			c.close()
		}
	}
}
