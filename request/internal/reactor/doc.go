// Package reactor is the machinery of request's event loop that knows
// nothing of HTTP: one epoll set of non-blocking sockets (Linux), an
// eventfd that other goroutines signal to wake it, waits timed to the
// nanosecond (epoll_pwait2; a timerfd for waits of TimerFrom or more, whose
// epoll timeout the kernel lets end 0.1 % late, and on kernels before 5.11), the
// runtime tuning that keeps those waits cheap (a yield every loopYield and
// a timer slack of 1 ns; see Reactor), and a heap of deadlines (Timers).
// The loop's HTTP/1.1 connections (request's loopConn) own the sockets:
// the reactor only watches them and says which are ready.
//
// Concurrency: a Reactor and a Timers belong to one goroutine, the loop's;
// only Signal may be called from any goroutine, and not after Close (the
// loop's own lock ensures that).
package reactor
