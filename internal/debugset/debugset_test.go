package debugset

import (
	"slices"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("table not sorted by name: %v", names)
	}
	seen := map[string]bool{}
	for _, s := range All {
		if seen[s.Name] {
			t.Errorf("%s listed twice", s.Name)
		}
		seen[s.Name] = true
		if !slices.Contains(s.Values, s.Default) {
			t.Errorf("%s: default %q not among its values %v", s.Name, s.Default, s.Values)
		}
		if s.Doc == "" || strings.ContainsAny(s.Name, "=, ") {
			t.Errorf("%s: needs a doc line and a name without '=', ',' or spaces", s.Name)
		}
	}
}

func TestParse(t *testing.T) {
	s, err := Parse("")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Get(MerkleKernel); got != "auto" {
		t.Errorf("default merklekernel = %q", got)
	}
	s, err = Parse(" merklekernel=generic, , ")
	if err != nil {
		t.Fatal(err)
	}
	if s.Get(MerkleKernel) != "generic" {
		t.Errorf("parsed %v", s.m)
	}
	if got := s.NonDefault(); !slices.Equal(got, []string{"merklekernel=generic"}) {
		t.Errorf("NonDefault = %v", got)
	}
	for in, want := range map[string]string{
		"nosuch=1":                               `unknown setting "nosuch" (known: merklekernel)`,
		"merklekernel=fast":                      `merklekernel: want auto, generic, stdlib, avx2, shani, avx512, got "fast"`,
		"merklekernel":                           `want name=value, got "merklekernel"`,
		"=auto":                                  `want name=value`,
		"merklekernel=auto,merklekernel=generic": "merklekernel given twice",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), Env+": ") {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestGetUnknownPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Get of an unknown name did not panic")
		}
	}()
	Settings{}.Get("nosuch")
}
