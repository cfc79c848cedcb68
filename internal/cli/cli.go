// Package cli is the shape every tool under bench/cmd and testkit/cmd shares
// (gate, valbench, btcdreplay, chaingen, storebench, ...), and the conventions utxod's
// own commands follow: main calls Main with the tool's run function, which
// gets a context that SIGINT and SIGTERM cancel; --help prints the usage on
// stdout and exits 0; a bad flag or argument is one line on stderr and exit
// status 2; every tool has --log-level and logs progress as log/slog text on
// stderr; a failure prints "tool: error" and exits 1.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	ExitOK    = 0
	ExitFail  = 1 // the tool ran and failed
	ExitUsage = 2 // bad flags or arguments
)

// Main runs a tool and exits with its status.
func Main(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Tool is one invocation's flags, logger and error reporting.
type Tool struct {
	Name  string
	Flags *flag.FlagSet
	// Log is the logger at --log-level, set by Parse.
	Log *slog.Logger

	usage          string
	stdout, stderr io.Writer
	logLevel       string
}

// New returns a tool whose --help is usage (a synopsis and a description)
// followed by the flags.
func New(name, usage string, stdout, stderr io.Writer) *Tool {
	t := &Tool{Name: name, Flags: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage, stdout: stdout, stderr: stderr}
	t.Flags.SetOutput(io.Discard)
	t.Flags.StringVar(&t.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	t.Flags.Usage = func() {
		fmt.Fprintf(t.Flags.Output(), "%s\nFlags:\n", usage)
		t.Flags.PrintDefaults()
	}
	return t
}

// Parse parses args and builds the logger. When done, the tool exits with
// code at once: 0 after --help, ExitUsage after a bad flag.
func (t *Tool) Parse(args []string) (code int, done bool) {
	err := t.Flags.Parse(args)
	if err == nil {
		var lvl slog.Level
		if err = lvl.UnmarshalText([]byte(t.logLevel)); err == nil {
			t.Log = slog.New(slog.NewTextHandler(t.stderr, &slog.HandlerOptions{Level: lvl}))
			return ExitOK, false
		}
		err = fmt.Errorf("--log-level: %w", err)
	}
	return ParseResult(t.Flags, t.Name, err, t.stdout, t.stderr)
}

// ParseResult applies the conventions to the error of parsing fs (whose
// Usage writes to fs.Output()): nil goes on; flag.ErrHelp prints the usage
// on stdout and stops with ExitOK; any other error prints "name: err (see
// name --help)" on stderr and stops with ExitUsage. utxod's commands and the
// tools share it.
func ParseResult(fs *flag.FlagSet, name string, err error, stdout, stderr io.Writer) (code int, done bool) {
	switch {
	case err == nil:
		return ExitOK, false
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return ExitOK, true
	}
	fmt.Fprintf(stderr, "%s: %v (see %s --help)\n", name, err, name)
	return ExitUsage, true
}

// UsageError prints "tool: err (see tool --help)" and returns ExitUsage.
func (t *Tool) UsageError(err error) int {
	fmt.Fprintf(t.stderr, "%s: %v (see %s --help)\n", t.Name, err, t.Name)
	return ExitUsage
}

// Fail prints "tool: err" and returns ExitFail.
func (t *Tool) Fail(err error) int {
	fmt.Fprintf(t.stderr, "%s: %v\n", t.Name, err)
	return ExitFail
}
