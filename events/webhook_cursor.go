package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// cursorFile is a hook's persisted position: DIR/ID.json holding
// {"url", "cursor", "delivered", "saved"}, replaced atomically (a temporary
// file synced, renamed over it, the directory synced).
type cursorFile struct {
	dir, id, url string
}

// hookPosition is where a hook stands: Cursor, where its stream resumes
// (the last block acknowledged, or passed over with nothing for the hook),
// and Delivered, the cursor of the last request acknowledged (the next
// request's Previous).
type hookPosition struct {
	Cursor, Delivered Cursor
}

type cursorRecord struct {
	URL       string    `json:"url"`
	Cursor    string    `json:"cursor"`
	Delivered string    `json:"delivered"`
	Saved     time.Time `json:"saved"`
}

func (c cursorFile) path() string { return filepath.Join(c.dir, c.id+".json") }

// load reads the position; ok is false when the hook has none yet.
func (c cursorFile) load() (pos hookPosition, ok bool, err error) {
	raw, err := os.ReadFile(c.path())
	if errors.Is(err, fs.ErrNotExist) {
		return pos, false, nil
	}
	if err != nil {
		return pos, false, fmt.Errorf("webhook %s: %w", c.url, err)
	}
	var r cursorRecord
	if err = json.Unmarshal(raw, &r); err == nil {
		if pos.Cursor, err = ParseCursor(r.Cursor); err == nil {
			pos.Delivered, err = ParseCursor(r.Delivered)
		}
	}
	if err != nil {
		return hookPosition{}, false, fmt.Errorf("webhook %s: its cursor file %s: %v (remove the file to start the hook from the tip)", c.url, c.path(), err)
	}
	return pos, true, nil
}

// save replaces the cursor file with pos.
func (c cursorFile) save(pos hookPosition) error {
	raw, err := json.Marshal(cursorRecord{URL: c.url, Cursor: pos.Cursor.String(), Delivered: pos.Delivered.String(), Saved: time.Now().UTC()})
	if err != nil {
		return err
	}
	return writeFileAtomic(c.path(), append(raw, '\n'))
}

// writeFileAtomic replaces path with data: a temporary file in the same
// directory, written and synced, renamed over path, and the directory
// synced, so that a crash leaves the old content or the new.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
