// Package debugset is the one table of settings that benchmarks and
// diagnosis may change in utxod without a command-line flag, in the manner
// of Go's internal/godebugs: each setting has a name, a default, the values
// it accepts and a line of documentation. utxod reads them once, from the
// environment variable UTXOD_DEBUG (name=value pairs separated by commas,
// e.g. UTXOD_DEBUG=merklekernel=generic), and applies each
// through the options of the package it concerns. The settings are
// documented in bench/settings.md, not in --help: the defaults are the
// product, the other values are arms for measurement.
//
// The package is a leaf: it parses and validates, it reads no environment.
package debugset

import (
	"fmt"
	"slices"
	"strings"
)

// Env is the environment variable utxod reads the settings from.
const Env = "UTXOD_DEBUG"

// Info describes one setting.
type Info struct {
	Name    string   // as written in UTXOD_DEBUG
	Default string   // the value when the setting is absent
	Values  []string // the values accepted (Default among them)
	Doc     string   // one line: what it selects
}

// Setting names.
const (
	MerkleKernel = "merklekernel"
)

// All is the table, sorted by name.
var All = []Info{
	{
		Name: MerkleKernel, Default: "auto",
		Values: []string{"auto", "generic", "stdlib", "avx2", "shani", "avx512"},
		Doc:    "SHA-256d kernel of block merkle roots: auto (the fastest the CPU runs, generic as fallback) or a named kernel (merkle.New)",
	},
}

// Lookup returns the setting named name.
func Lookup(name string) (Info, bool) {
	i := slices.IndexFunc(All, func(s Info) bool { return s.Name == name })
	if i < 0 {
		return Info{}, false
	}
	return All[i], true
}

// Names lists the settings' names in table order.
func Names() []string {
	out := make([]string, len(All))
	for i, s := range All {
		out[i] = s.Name
	}
	return out
}

// Settings are parsed values; a setting absent from them has its default.
type Settings struct {
	m map[string]string
}

// Parse reads s, name=value pairs separated by commas (blank entries and
// surrounding spaces are ignored). An unknown name, a value the setting does
// not accept, a pair without '=' or a setting given twice is an error that
// names it and what is accepted.
func Parse(s string) (Settings, error) {
	out := Settings{m: make(map[string]string)}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, value, ok := strings.Cut(kv, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return Settings{}, fmt.Errorf("%s: want name=value, got %q", Env, kv)
		}
		info, known := Lookup(name)
		if !known {
			return Settings{}, fmt.Errorf("%s: unknown setting %q (known: %s)", Env, name, strings.Join(Names(), ", "))
		}
		if !slices.Contains(info.Values, value) {
			return Settings{}, fmt.Errorf("%s: %s: want %s, got %q", Env, name, strings.Join(info.Values, ", "), value)
		}
		if _, dup := out.m[name]; dup {
			return Settings{}, fmt.Errorf("%s: %s given twice", Env, name)
		}
		out.m[name] = value
	}
	return out, nil
}

// Get returns the value of the named setting: the parsed one, else the
// default. It panics on a name the table lacks (a programming error).
func (s Settings) Get(name string) string {
	if v, ok := s.m[name]; ok {
		return v
	}
	info, ok := Lookup(name)
	if !ok {
		panic("debugset: unknown setting " + name)
	}
	return info.Default
}

// NonDefault lists the settings given with a value other than their
// default, as name=value in table order (for a log line).
func (s Settings) NonDefault() []string {
	var out []string
	for _, info := range All {
		if v, ok := s.m[info.Name]; ok && v != info.Default {
			out = append(out, info.Name+"="+v)
		}
	}
	return out
}
