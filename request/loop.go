package request

import (
	"errors"
	"io"

	"github.com/knee-dev/knee/load"
)

var _ load.LoopIteration = (*Sender)(nil)

// Bounds of what the event loop does itself. A response that has not
// ended within loopMaxInLoop bytes or loopMaxParses reads (a large body, a
// trickle) is finished by a goroutine with the blocking client's code, so
// the loop never holds more than a small tail per connection and never
// parses one response more than a few times.
const (
	loopMaxInLoop = 64 << 10
	loopMaxParses = 8
)

// NewLoop returns an event loop that sends the requests the lean client
// can send on one goroutine, over non-blocking sockets of its own, and
// hands every other request to Do on a goroutine of its own. It fails when
// no request goes through the lean client (the goroutine engine is as
// good then) and where the platform has no loop (load then runs the
// scenario with goroutine VUs).
func (s *Sender) NewLoop() (load.Loop, error) {
	if s.lean == nil {
		return nil, errors.New("request: no request goes through the lean HTTP/1.1 client, so the event loop has nothing to send")
	}
	return newLoop(s)
}

// errNeedMore: the bytes received so far end before the response does.
var errNeedMore = errors.New("response incomplete so far")

// tailReader feeds readResponse the bytes received so far. When they run
// out it returns err, the connection's final error (io.EOF, a reset, the
// deadline), or, while the connection is still open, errNeedMore and notes
// that it did: the parse is then tried again from the start with more.
type tailReader struct {
	data  []byte
	off   int
	err   error
	short bool
}

func (r *tailReader) Read(p []byte) (int, error) {
	if r.off < len(r.data) {
		n := copy(p, r.data[r.off:])
		r.off += n
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	r.short = true
	return 0, errNeedMore
}

var _ io.Reader = (*tailReader)(nil)
