package cli

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// Env is the process state knee's commands may touch. Main takes it as an
// argument so tests can run commands without a process of their own; this is
// the only place os is read.
type Env struct {
	Args       []string // without the program name
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
	Getenv     func(string) string
	IsTerminal bool // stdout is a terminal (the progress line asks of stderr: app.progressStream)
	// Signals delivers interrupt requests (Ctrl-C, SIGTERM). Nil means none arrive.
	Signals <-chan os.Signal
	PID     int // this process, for messages
	// Executable is the path of the knee binary, for children started by the lab.
	Executable string
}

// OSEnv returns the Env of the running process.
func OSEnv() Env {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return Env{
		Args:       os.Args[1:],
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		IsTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		Signals:    sig,
		Executable: exe,
		PID:        os.Getpid(),
	}
}
