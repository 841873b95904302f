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
	IsTerminal bool // stdout is a terminal: tables fit its Width (the progress line asks of stderr)
	// Width is stdout's terminal width in columns, read at each call (the
	// window may be resized); nil or 0: unknown, tables keep full width.
	Width func() int
	// StderrIsTerminal: stderr is a terminal, so a run's progress line is
	// live (rewritten in place, fitted to StderrWidth), whatever stdout is.
	StderrIsTerminal bool
	StderrWidth      func() int
	// Signals delivers interrupt requests (Ctrl-C, SIGTERM). Nil means none arrive.
	Signals <-chan os.Signal
	PID     int // this process, for messages
	// Exit ends the process at once with a code, when the second interrupt
	// finds knee still busy; nil: never.
	Exit func(code int)
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
		Args:             os.Args[1:],
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		IsTerminal:       term.IsTerminal(int(os.Stdout.Fd())),
		Width:            terminalWidth(os.Stdout),
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		StderrWidth:      terminalWidth(os.Stderr),
		Signals:          sig,
		Executable:       exe,
		Exit:             os.Exit,
		PID:              os.Getpid(),
	}
}

// terminalWidth reads the width of the terminal f is, at each call; 0 when
// f is not a terminal.
func terminalWidth(f *os.File) func() int {
	return func() int {
		w, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return w
	}
}
