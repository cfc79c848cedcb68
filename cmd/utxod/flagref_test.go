package main

// docs/flags.md is generated from the commands' own --help output (their flag
// sets' PrintDefaults), as Go's cmd/go generates alldocs.go from its help
// text; TestFlagReference fails when the committed file drifts. Regenerate:
//
//	go test ./cmd/utxod -run TestFlagReference -update
//
// (also what `go generate ./cmd/utxod` and `make generate` run).

//go:generate go test -run ^TestFlagReference$ -update .

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var updateFlagRef = flag.Bool("update", false, "rewrite docs/flags.md from the commands' flag sets")

const flagRefPath = "../../docs/flags.md"

// machineDefaults replaces defaults computed from the machine that runs the
// generator, so that the reference is the same everywhere.
var machineDefaults = map[string]string{
	"api-procs": "the number of cores",
}

// refFlag is one flag as its command's --help prints it.
type refFlag struct {
	name, typ, def, usage string
}

func (f refFlag) key() string { return f.name + "\x00" + f.typ + "\x00" + f.def + "\x00" + f.usage }

// refCommand is one command or subcommand: its usage text (before "Flags:")
// and its flags.
type refCommand struct {
	name  string // "import", "snapshot dump", "index build|drop|verify"
	usage string
	flags []refFlag
}

// helpOf runs `utxod <args> --help` in process and returns its stdout.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append(args, "--help"), &out, &errb); code != 0 || errb.Len() != 0 {
		t.Fatalf("utxod %s --help: exit %d, stderr %q", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// subcommandsRE finds the subcommands a usage line lists: "utxod snapshot
// <dump|verify|load>", "utxod index build|drop|verify".
var subcommandsRE = regexp.MustCompile(`^Usage: utxod \S+ <?([a-z]+(?:\|[a-z]+)+)>?`)

// referenceCommands walks every command of the dispatch table and every
// subcommand its usage line names; subcommands whose --help is identical
// (one flag set) are one entry.
func referenceCommands(t *testing.T) []refCommand {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	var cmds []refCommand
	for _, name := range names {
		help := helpOf(t, name)
		m := subcommandsRE.FindStringSubmatch(help)
		if m == nil {
			cmds = append(cmds, parseHelp(t, name, help))
			continue
		}
		var group []string
		var groupHelp string
		flushGroup := func() {
			if group != nil {
				cmds = append(cmds, parseHelp(t, name+" "+strings.Join(group, "|"), groupHelp))
			}
		}
		for _, sub := range strings.Split(m[1], "|") {
			h := helpOf(t, name, sub)
			if group != nil && h == groupHelp {
				group = append(group, sub)
				continue
			}
			flushGroup()
			group, groupHelp = []string{sub}, h
		}
		flushGroup()
	}
	return cmds
}

var (
	quotedDefaultRE = regexp.MustCompile(` \(default ("(?:[^"\\]|\\.)*")\)$`)
	plainDefaultRE  = regexp.MustCompile(` \(default ([^\s()]+)\)$`)
)

// parseHelp splits a --help text into the usage before "Flags:" and the
// flags flag.PrintDefaults printed after it.
func parseHelp(t *testing.T, name, help string) refCommand {
	t.Helper()
	usage, flags, ok := strings.Cut(help, "\nFlags:\n")
	if !ok {
		t.Fatalf("utxod %s --help has no \"Flags:\" line", name)
	}
	c := refCommand{name: name, usage: strings.TrimSpace(usage)}
	var cur *refFlag
	for line := range strings.SplitSeq(strings.TrimRight(flags, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "  -"); ok {
			c.flags = append(c.flags, refFlag{})
			cur = &c.flags[len(c.flags)-1]
			head, usage, short := strings.Cut(rest, "\t")
			cur.name, cur.typ, _ = strings.Cut(head, " ")
			if short {
				cur.usage = usage
			}
			continue
		}
		text, ok := strings.CutPrefix(line, "    \t")
		if !ok || cur == nil {
			t.Fatalf("utxod %s --help: unexpected flag line %q", name, line)
		}
		if cur.usage != "" {
			cur.usage += " "
		}
		cur.usage += text
	}
	for i := range c.flags {
		f := &c.flags[i]
		if f.typ == "string" {
			if m := quotedDefaultRE.FindStringSubmatch(f.usage); m != nil {
				s, err := strconv.Unquote(m[1])
				if err != nil {
					t.Fatalf("utxod %s --%s: default %s: %v", name, f.name, m[1], err)
				}
				f.def, f.usage = "`"+s+"`", strings.TrimSuffix(f.usage, m[0])
			}
		} else if m := plainDefaultRE.FindStringSubmatch(f.usage); m != nil {
			f.def, f.usage = "`"+m[1]+"`", strings.TrimSuffix(f.usage, m[0])
		}
		if f.def == "" && f.typ == "" {
			f.def = "`false`"
		}
		if d, ok := machineDefaults[f.name]; ok {
			f.def = d
		}
		if f.typ == "" {
			f.typ = "bool"
		}
	}
	return c
}

// flagReference renders docs/flags.md.
func flagReference(t *testing.T) []byte {
	cmds := referenceCommands(t)
	// A flag is shared when at least three commands have it with the same
	// type, default and meaning.
	count := map[string]int{}
	first := map[string]refFlag{}
	for _, c := range cmds {
		for _, f := range c.flags {
			count[f.key()]++
			first[f.key()] = f
		}
	}
	var shared []refFlag
	for k, n := range count {
		if n >= 3 {
			shared = append(shared, first[k])
		}
	}
	slices.SortFunc(shared, func(a, b refFlag) int { return strings.Compare(a.name, b.name) })
	isShared := func(f refFlag) bool { return count[f.key()] >= 3 }

	var b bytes.Buffer
	b.WriteString("<!-- Generated from the commands' --help by cmd/utxod/flagref_test.go; do not edit.\n" +
		"     Regenerate: go test ./cmd/utxod -run TestFlagReference -update -->\n\n")
	b.WriteString("# utxod flags\n\n")
	b.WriteString("Every flag of every `utxod` command, as its `--help` prints it. Every flag falls back to an environment\n" +
		"variable, `UTXOD_<FLAG>` with dashes as underscores (`--cache-mb` → `UTXOD_CACHE_MB`); the command line wins.\n" +
		"A bad value, on the command line or in the environment, exits 2 with one line saying what is wrong.\n\n")
	b.WriteString("Commands: ")
	for i, c := range cmds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "[%s](#%s)", c.name, anchor("utxod "+c.name))
	}
	b.WriteString(".\n\n## Shared flags\n\n")
	b.WriteString("The flags below mean the same in every command that has them (the commands' sections name which).\n\n")
	writeFlagTable(&b, shared)
	for _, c := range cmds {
		fmt.Fprintf(&b, "\n## utxod %s\n\n```\n%s\n```\n\n", c.name, c.usage)
		var own, common []refFlag
		for _, f := range c.flags {
			if isShared(f) {
				common = append(common, f)
			} else {
				own = append(own, f)
			}
		}
		if len(common) > 0 {
			b.WriteString("Shared flags: ")
			for i, f := range common {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "`--%s`", f.name)
			}
			b.WriteString(".\n\n")
		}
		if len(own) > 0 {
			writeFlagTable(&b, own)
		}
	}
	return b.Bytes()
}

func writeFlagTable(b *bytes.Buffer, flags []refFlag) {
	b.WriteString("| flag | type | default | environment | meaning |\n|---|---|---|---|---|\n")
	for _, f := range flags {
		fmt.Fprintf(b, "| `--%s` | %s | %s | `%s` | %s |\n", f.name, f.typ, f.def, envName(f.name),
			strings.ReplaceAll(f.usage, "|", `\|`))
	}
}

// anchor is GitHub's heading anchor for s.
func anchor(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// TestFlagReference fails when docs/flags.md is not what the commands' flag
// sets generate; -update rewrites it.
func TestFlagReference(t *testing.T) {
	got := flagReference(t)
	if *updateFlagRef {
		if err := os.WriteFile(flagRefPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(flagRefPath)
	if err != nil {
		t.Fatalf("%v (generate it: go test ./cmd/utxod -run TestFlagReference -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/flags.md is out of date with the commands' flags; regenerate it: go test ./cmd/utxod -run TestFlagReference -update")
	}
}

func TestParseHelp(t *testing.T) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.String("cookie-file", "", "where (default DATADIR/.cookie)")
	fs.String("network", "main", "network")
	fs.Bool("archive", false, "keep\nall")
	fs.Bool("x", true, "short")
	fs.Int("n", 3, "a `count`")
	var b bytes.Buffer
	fs.SetOutput(&b)
	b.WriteString("Usage: demo\n\nFlags:\n")
	fs.PrintDefaults()
	c := parseHelp(t, "demo", b.String())
	want := []refFlag{
		{"archive", "bool", "`false`", "keep all"},
		{"cookie-file", "string", "", "where (default DATADIR/.cookie)"},
		{"n", "count", "`3`", "a count"},
		{"network", "string", "`main`", "network"},
		{"x", "bool", "`true`", "short"},
	}
	if c.usage != "Usage: demo" || !slices.Equal(c.flags, want) {
		t.Fatalf("got %q %+v\nwant %+v", c.usage, c.flags, want)
	}
}
