package utxo

// Fast paths for records already known to be canonical: produced by this
// package's encoders or accepted once by a validating decoder (the coins
// cache validates what it reads from the store, then keeps only records it
// built). They check the header and directory (so every slice stays inside
// b and bad bytes give an error, never a panic) but not the payloads they
// do not return: each validating call re-parses every payload, which the
// coins cache paid on every lookup of a record it had itself encoded.

// ValidateRecord reports whether b is a canonical record (any error wraps
// ErrNonCanonical); it is the check the functions below rely on.
func ValidateRecord(b []byte) error {
	_, err := parseRecord(b)
	return err
}

// ValidRecordGet is RecordGet for a canonical record: only vout's payload
// is parsed (and checked).
func ValidRecordGet(b []byte, vout uint32) (c Coin, found bool, err error) {
	l, err := parseDirectory(b)
	if err != nil {
		return Coin{}, false, err
	}
	it := l.iter(b)
	for i := 0; i < l.n; i++ {
		e := it.next()
		if e.vout == vout {
			if _, _, _, err := parsePayload(e.payload); err != nil {
				return Coin{}, false, err
			}
			c, _ = payloadCoin(e.payload, l.code, nil)
			return c, true, nil
		}
		if e.vout > vout {
			break
		}
	}
	return Coin{}, false, nil
}

// ValidRecordDelete is RecordRemove for a canonical record, without
// materialising the removed coin: it appends to dst the record without
// output vout (nothing when vout was its only output) and reports whether
// vout was there (dst unchanged if not). dst must not overlap b.
func ValidRecordDelete(dst, b []byte, vout uint32) (rec []byte, found bool, err error) {
	l, err := parseDirectory(b)
	if err != nil {
		return dst, false, err
	}
	dst, _, found = l.without(dst, b, vout)
	return dst, found, nil
}

// ValidRecordLen is RecordLen for a canonical record.
func ValidRecordLen(b []byte) (int, error) {
	l, err := parseDirectory(b)
	return l.n, err
}

// ValidRecordFirstIndex is RecordFirstIndex for a canonical record.
func ValidRecordFirstIndex(b []byte) (uint32, error) {
	l, err := parseDirectory(b)
	if err != nil {
		return 0, err
	}
	return l.first(b), nil
}
