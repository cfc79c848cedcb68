package utxo

import (
	"bytes"
	"testing"
)

// checkValidAgrees requires the fast paths for canonical records to give
// the validating functions' answers on b (a canonical record) for every
// vout it holds and its neighbours.
func checkValidAgrees(t *testing.T, b []byte) {
	t.Helper()
	n, err := RecordLen(b)
	if err != nil {
		t.Fatalf("not canonical: %v", err)
	}
	if err := ValidateRecord(b); err != nil {
		t.Fatalf("ValidateRecord: %v", err)
	}
	if vn, err := ValidRecordLen(b); err != nil || vn != n {
		t.Fatalf("ValidRecordLen %d %v, RecordLen %d", vn, err, n)
	}
	first, _ := RecordFirstIndex(b)
	if vf, err := ValidRecordFirstIndex(b); err != nil || vf != first {
		t.Fatalf("ValidRecordFirstIndex %d %v, RecordFirstIndex %d", vf, err, first)
	}
	outs, _ := DecodeRecord(b, nil)
	var vouts []uint32
	for _, o := range outs {
		vouts = append(vouts, o.Index, o.Index+1)
		if o.Index > 0 {
			vouts = append(vouts, o.Index-1)
		}
	}
	for _, v := range vouts {
		c, found, err := RecordGet(b, v)
		vc, vfound, verr := ValidRecordGet(b, v)
		if err != nil || verr != nil || found != vfound || (found && !coinEqual(c, vc)) {
			t.Fatalf("vout %d: ValidRecordGet %+v %v %v, RecordGet %+v %v %v", v, vc, vfound, verr, c, found, err)
		}
		rest, _, found, err := RecordRemove([]byte{7}, b, v)
		vrest, vfound, verr := ValidRecordDelete([]byte{7}, b, v)
		if err != nil || verr != nil || found != vfound || !bytes.Equal(rest, vrest) {
			t.Fatalf("vout %d: ValidRecordDelete %x %v %v, RecordRemove %x %v %v", v, vrest, vfound, verr, rest, found, err)
		}
	}
}
