package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"utxod/backends"
	"utxod/store/kvstore"
	"utxod/store/kvstore/spindex"
)

// spIndexCommand runs utxod index build|drop|verify --index silentpayments
// on an open datadir store: the tweak index of the blocks whose block and
// undo data the datadir keeps (spindex.Build, Drop, Verify).
func spIndexCommand(ctx context.Context, sub, datadir string, kv backends.KV, log *slog.Logger, report func(done, total uint64), stdout io.Writer) error {
	st, err := kvstore.Open(kv, kvstore.Options{
		CacheBytes: 64 << 20,
		BlocksDir:  filepath.Join(datadir, "blocks"),
		UndoDir:    filepath.Join(datadir, "undo"),
		Log:        log,
	})
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Now()
	switch sub {
	case "build":
		m, err := spindex.Build(ctx, kv, st, 0, report)
		switch {
		case errors.Is(err, spindex.ErrExists):
			return fmt.Errorf("%s already has a silent-payments index (at height %d); utxod index drop --index %s removes it", datadir, m.Tip.Height, spindex.Name)
		case ctx.Err() != nil:
			return fmt.Errorf("interrupted at height %d of %d; run it again to resume", m.Next, m.Tip.Height)
		case err != nil:
			return err
		}
		log.Info("index build done", "from", m.Tip.From, "height", m.Tip.Height, "seconds", time.Since(start).Seconds())
		fmt.Fprintf(stdout, "silent-payments index built: heights %d to %d (%s)\n", m.Tip.From, m.Tip.Height, m.Tip.Hash)
	case "verify":
		rep, err := spindex.Verify(ctx, kv, st, report)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "silent-payments index verified: heights %d to %d, %d blocks recomputed, %d by hash only (no block or undo data)\n",
			rep.Meta.Tip.From, rep.Meta.Tip.Height, rep.Checked, rep.Skipped)
	case "drop":
		n, err := spindex.Drop(ctx, kv, report)
		if err != nil {
			return fmt.Errorf("%w (run it again to finish)", err)
		}
		fmt.Fprintf(stdout, "silent-payments index dropped: %d keys removed\n", n)
	}
	return nil
}
