package gate

import (
	"fmt"
	"slices"
	"strings"
)

// Placeholders are the names a command template may use, each written
// {name}. "{{" and "}}" stand for literal braces.
//
//	{bin}      the arm's utxod binary (Arm.Bin; the CLI defaults it to the
//	           utxod beside its own executable)
//	{network}  the --network value
//	{corpus}   the corpus file (absolute path)
//	{backend}  the store under test (pebble, rocksdb, bbolt)
//	{datadir}  a fresh, not yet existing data directory inside {tmp}
//	{tmp}      the run's private temporary directory (deleted after the run)
//	{arm}      control or candidate
//	{run}      the run's 1-based index within its arm and store
var Placeholders = []string{"bin", "network", "corpus", "backend", "datadir", "tmp", "arm", "run"}

// requiredPlaceholders must appear in every template: the gate measures
// stores on fresh data directories over the corpus.
var requiredPlaceholders = []string{"backend", "datadir", "corpus"}

// Template is a shell-free argv template: whitespace separates arguments;
// single quotes group literally, double quotes group with backslash escapes
// (\" and \\); a backslash outside quotes escapes the next character. Nothing
// else is interpreted: no variables, globs, pipes or redirections. Each
// argument may contain placeholders (see Placeholders), substituted after
// splitting, so a substituted value never splits into several arguments.
type Template struct {
	Source string
	args   []string
}

// ParseTemplate splits src into arguments and checks its placeholders.
func ParseTemplate(src string) (Template, error) {
	args, err := splitArgs(src)
	if err != nil {
		return Template{}, err
	}
	if len(args) == 0 {
		return Template{}, fmt.Errorf("gate: empty command template")
	}
	used := map[string]bool{}
	for _, a := range args {
		names, err := placeholdersIn(a)
		if err != nil {
			return Template{}, fmt.Errorf("gate: template %q: %w", src, err)
		}
		for _, n := range names {
			used[n] = true
		}
	}
	for _, n := range requiredPlaceholders {
		if !used[n] {
			return Template{}, fmt.Errorf("gate: template %q does not use {%s} (every run needs a fresh datadir for the store under test over the corpus)", src, n)
		}
	}
	return Template{Source: src, args: args}, nil
}

// Uses reports whether the template mentions placeholder name.
func (t Template) Uses(name string) bool {
	for _, a := range t.args {
		names, _ := placeholdersIn(a)
		if slices.Contains(names, name) {
			return true
		}
	}
	return false
}

// Args returns the unexpanded arguments.
func (t Template) Args() []string { return slices.Clone(t.args) }

// Expand substitutes vars (placeholder name → value) into every argument.
func (t Template) Expand(vars map[string]string) ([]string, error) {
	out := make([]string, len(t.args))
	for i, a := range t.args {
		s, err := expandArg(a, vars)
		if err != nil {
			return nil, fmt.Errorf("gate: template %q: %w", t.Source, err)
		}
		out[i] = s
	}
	return out, nil
}

func placeholdersIn(arg string) ([]string, error) {
	var names []string
	_, err := walkArg(arg, func(name string) (string, error) {
		if !slices.Contains(Placeholders, name) {
			return "", fmt.Errorf("unknown placeholder {%s} (known: {%s})", name, strings.Join(Placeholders, "}, {"))
		}
		names = append(names, name)
		return "", nil
	})
	return names, err
}

func expandArg(arg string, vars map[string]string) (string, error) {
	return walkArg(arg, func(name string) (string, error) {
		v, ok := vars[name]
		if !ok {
			return "", fmt.Errorf("no value for {%s}", name)
		}
		return v, nil
	})
}

// walkArg rewrites arg, calling f for every {name} and collapsing {{ and }}.
func walkArg(arg string, f func(string) (string, error)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		switch {
		case c == '{' && i+1 < len(arg) && arg[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(arg) && arg[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(arg[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated placeholder in %q", arg)
			}
			v, err := f(arg[i+1 : i+end])
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += end
		case c == '}':
			return "", fmt.Errorf("stray '}' in %q (write }} for a literal brace)", arg)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// splitArgs splits a command line the way described on Template.
func splitArgs(s string) ([]string, error) {
	var (
		args  []string
		cur   strings.Builder
		inArg bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("gate: unterminated single quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inArg = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("gate: unterminated double quote in %q", s)
			}
			inArg = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("gate: trailing backslash in %q", s)
			}
			i++
			cur.WriteByte(s[i])
			inArg = true
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}
