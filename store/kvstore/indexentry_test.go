package kvstore

import (
	"bytes"
	"testing"

	"utxod/validate"
	"utxod/wire"
)

// TestIndexEntryStats: an entry with stats round-trips; one without them
// is byte for byte the format before them, and such entries (a reject
// reason or none) still read.
func TestIndexEntryStats(t *testing.T) {
	h := wire.Header{Version: 2, Time: 1700000000, Bits: 0x207fffff, Nonce: 7}
	var got validate.IndexEntry
	for _, e := range []validate.IndexEntry{
		{Header: h, Status: 5},
		{Header: h, Status: 9, RejectReason: "bad-txnmrklroot"},
		{Header: h, Status: 5, Stats: validate.BlockStats{TxCount: 2, Size: 400, Weight: 1300}},
		{Header: h, Status: 9, RejectReason: "bad-cb-amount", Stats: validate.BlockStats{TxCount: 1, Size: 215, Weight: 860}},
	} {
		b := encodeIndexEntry(nil, &e)
		if len(b) != indexEntrySize(&e) {
			t.Errorf("%+v: %d bytes, indexEntrySize %d", e, len(b), indexEntrySize(&e))
		}
		if e.Stats == (validate.BlockStats{}) {
			old := binaryLE(h.AppendTo(nil), uint32(e.Status), e.RejectReason)
			if !bytes.Equal(b, old) {
				t.Errorf("%+v without stats: %x, want the old format %x", e, b, old)
			}
		}
		// One entry decoded into over and over, as the load does: nothing
		// of the previous entry (its reason, its stats) may stay.
		err := decodeIndexEntry(b, &got)
		if err != nil || got != e {
			t.Errorf("decode %+v: %+v %v", e, got, err)
		}
	}
	if err := decodeIndexEntry(append(h.AppendTo(nil), 5, 0, 0, 0, 0, 1, 2), &got); err == nil {
		t.Error("truncated stats decoded")
	}
}

// binaryLE is the format before the stats: header ‖ status ‖ reason.
func binaryLE(hdr []byte, status uint32, reason string) []byte {
	b := append(hdr, byte(status), byte(status>>8), byte(status>>16), byte(status>>24))
	return append(b, reason...)
}
