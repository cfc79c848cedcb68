package kvstore

import (
	"path/filepath"
	"slices"
	"testing"

	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// TestVisitCoinsAbove: the walk lists exactly the unspent coins created
// above the height asked (spent ones and older records it rewrote are not
// listed), and refuses a height below the tip on disk, whose records it
// could not see, also after a reopen.
func TestVisitCoinsAbove(t *testing.T) {
	coin := func(h uint32) utxo.Coin {
		return utxo.Coin{Value: int64(h) * 10, Height: h, Script: []byte{0x51, byte(h)}}
	}
	op := func(b byte, i uint32) utxo.Outpoint { return utxo.Outpoint{Hash: wire.Hash{b}, Index: i} }
	blocks := []*utxo.Delta{
		{Created: []utxo.Entry{{Outpoint: op(1, 0), Coin: coin(1)}, {Outpoint: op(1, 1), Coin: coin(1)}}},
		{Spent: []utxo.Entry{{Outpoint: op(1, 0), Coin: coin(1)}},
			Created: []utxo.Entry{{Outpoint: op(2, 0), Coin: coin(2)}, {Outpoint: op(2, 3), Coin: coin(2)}}},
		{Spent: []utxo.Entry{{Outpoint: op(2, 3), Coin: coin(2)}},
			Created: []utxo.Entry{{Outpoint: op(3, 0), Coin: coin(3)}}},
		{Spent: []utxo.Entry{{Outpoint: op(3, 0), Coin: coin(3)}},
			Created: []utxo.Entry{{Outpoint: op(4, 1), Coin: coin(4)}}},
	}
	visit := func(t *testing.T, s *Store, h uint32) (bool, []string) {
		t.Helper()
		var got []string
		ok, err := s.VisitCoinsAbove(h, func(txid wire.Hash, coins []utxo.IndexedCoin) error {
			for _, c := range coins {
				if c.Coin.Height <= h || c.Coin.Value != int64(c.Coin.Height)*10 {
					t.Errorf("listed %x:%d %+v above %d", txid[0], c.Index, c.Coin, h)
				}
				got = append(got, string(rune('0'+txid[0]))+":"+string(rune('0'+c.Index)))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		return ok, got
	}
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			kv := openKV(t, name, dir)
			s := New(kv, 1<<30)
			var g store.Stats
			g.SetTip(0, wire.Hash{0xee})
			if err := s.SetGenesis(wire.Hash{0xee}, &g); err != nil {
				t.Fatal(err)
			}
			for i, d := range blocks[:3] {
				if err := s.Connect(wire.Hash{byte(i + 1)}, d); err != nil {
					t.Fatal(err)
				}
			}
			if ok, got := visit(t, s, 1); !ok || !slices.Equal(got, []string{"2:0", "3:0"}) {
				t.Fatalf("above 1 before any flush: %v %v, want 2:0 3:0", ok, got)
			}
			if ok, got := visit(t, s, 0); !ok || !slices.Equal(got, []string{"1:1", "2:0", "3:0"}) {
				t.Fatalf("above 0: %v %v, want 1:1 2:0 3:0", ok, got)
			}
			var st store.Stats
			st.SetTip(3, wire.Hash{3})
			if err := s.Flush(nil, &st); err != nil {
				t.Fatal(err)
			}
			if ok, _ := visit(t, s, 2); ok {
				t.Fatal("a walk below the flushed tip was answered")
			}
			if err := s.Connect(wire.Hash{4}, blocks[3]); err != nil {
				t.Fatal(err)
			}
			if ok, got := visit(t, s, 3); !ok || !slices.Equal(got, []string{"4:1"}) {
				t.Fatalf("above 3 after the flush: %v %v, want 4:1", ok, got)
			}
			st.SetTip(4, wire.Hash{4})
			if err := s.Flush(nil, &st); err != nil {
				t.Fatal(err)
			}
			s.Close()
			kv.Close()
			kv = openKV(t, name, dir)
			defer kv.Close()
			s = New(kv, 1<<30)
			defer s.Close()
			if _, err := s.Load(); err != nil {
				t.Fatal(err)
			}
			if ok, _ := visit(t, s, 3); ok {
				t.Fatal("after a reopen, a walk below the tip on disk was answered")
			}
			if ok, got := visit(t, s, 4); !ok || len(got) != 0 {
				t.Fatalf("above the reopened tip: %v %v, want nothing", ok, got)
			}
		})
	}
}
