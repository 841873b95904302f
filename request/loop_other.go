//go:build !linux

package request

import (
	"errors"

	"github.com/knee-dev/knee/load"
)

// newLoop: the event loop is written for Linux's epoll only.
func newLoop(*Sender) (load.Loop, error) {
	return nil, errors.New("request: the event loop runs on Linux only")
}
