package snapshot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPrepareStaging: a staging directory a killed load left is replaced —
// recognised by its marker, or empty (killed between the mkdir and the
// marker) — and a directory holding anything else is refused untouched.
func TestPrepareStaging(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   []string // in the existing directory; nil: no directory
		refused bool
	}{
		{"absent", nil, false},
		{"empty", []string{}, false},
		{"marked", []string{stagingMarker, "000001.log"}, false},
		{"foreign", []string{"notes.txt"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d.snapshot-loading")
			if c.files != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, f := range c.files {
					if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			err := prepareStaging(dir)
			if c.refused {
				if err == nil {
					t.Fatal("a foreign directory was taken over")
				}
				if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
					t.Fatalf("the refused directory was changed: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 1 || entries[0].Name() != stagingMarker {
				t.Fatalf("staging directory holds %v (%v), want only the marker", entries, err)
			}
		})
	}
}
