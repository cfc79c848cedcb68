package script

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/txscript/v2"

	"utxod/wire"
)

// Test helpers: Core's ParseScript (src/core_read.cpp), a transaction
// encoder, the crediting/spending pair of script_tests.cpp and a
// CheckTransaction subset for tx_invalid's BADTX cases.

var (
	opNamesOnce sync.Once
	opNames     map[string]byte
)

// opcodeByName follows Core's OpCodeParser: every opcode from OP_NOP up
// (plus OP_RESERVED) by its name, with or without the OP_ prefix. Names come
// from btcd's table, which also knows the NOP2/NOP3 aliases of CLTV/CSV.
func opcodeByName(name string) (byte, bool) {
	opNamesOnce.Do(func() {
		m := make(map[string]byte)
		for n, v := range txscript.OpcodeByName {
			if strings.Contains(n, "OP_UNKNOWN") {
				continue
			}
			if v < txscript.OP_NOP && v != txscript.OP_RESERVED &&
				n != "OP_FALSE" && n != "OP_TRUE" {
				continue
			}
			m[n] = v
			m[strings.TrimPrefix(n, "OP_")] = v
		}
		opNames = m
	})
	v, ok := opNames[name]
	return v, ok
}

// pushData appends a push of d as CScript::operator<<(span) does.
func pushData(s, d []byte) []byte {
	switch n := len(d); {
	case n < 0x4c:
		s = append(s, byte(n))
	case n <= 0xff:
		s = append(s, 0x4c, byte(n))
	case n <= 0xffff:
		s = append(s, 0x4d)
		s = binary.LittleEndian.AppendUint16(s, uint16(n))
	default:
		s = append(s, 0x4e)
		s = binary.LittleEndian.AppendUint32(s, uint32(n))
	}
	return append(s, d...)
}

// pushInt appends n as CScript::push_int64 does.
func pushInt(s []byte, n int64) []byte { return AppendPushInt64(s, n) }

func isDecimal(w string) bool {
	if strings.HasPrefix(w, "-") {
		w = w[1:]
	}
	if w == "" {
		return false
	}
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseScript is Core's ParseScript (src/core_read.cpp).
func parseScript(src string) ([]byte, error) { return parseScriptRange(src, true) }

// parseScriptRange is parseScript; limit=false drops the ±0xffffffff bound
// on decimals that Core's ParseScript gained after the v0.24.2-era vectors.
func parseScriptRange(src string, limit bool) ([]byte, error) {
	out := []byte{}
	for _, w := range strings.Fields(src) {
		switch {
		case isDecimal(w):
			n, err := strconv.ParseInt(w, 10, 64)
			if err != nil || (limit && (n > 0xffffffff || n < -0xffffffff)) {
				return nil, fmt.Errorf("decimal %q out of range", w)
			}
			out = pushInt(out, n)
		case strings.HasPrefix(w, "0x") && len(w) > 2:
			b, err := hex.DecodeString(w[2:])
			if err != nil {
				return nil, fmt.Errorf("bad hex %q", w)
			}
			out = append(out, b...)
		case len(w) >= 2 && w[0] == '\'' && w[len(w)-1] == '\'':
			out = pushData(out, []byte(w[1:len(w)-1]))
		default:
			op, ok := opcodeByName(w)
			if !ok {
				return nil, fmt.Errorf("bad token %q", w)
			}
			out = append(out, op)
		}
	}
	return out, nil
}

// txIn / txOut / rawTx describe a transaction to encode.
type rawTx struct {
	version  int32
	ins      []wire.TxIn
	outs     []wire.TxOut
	lockTime uint32
}

// encode serializes t as Core does: the segwit form when any input has a
// witness.
func (t *rawTx) encode() []byte {
	hasWit := false
	for _, in := range t.ins {
		if len(in.Witness) > 0 {
			hasWit = true
		}
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(t.version))
	if hasWit {
		b = append(b, 0, 1)
	}
	b = wire.AppendCompactSize(b, uint64(len(t.ins)))
	for _, in := range t.ins {
		b = append(b, in.PrevHash[:]...)
		b = binary.LittleEndian.AppendUint32(b, in.PrevIndex)
		b = wire.AppendCompactSize(b, uint64(len(in.Script)))
		b = append(b, in.Script...)
		b = binary.LittleEndian.AppendUint32(b, in.Sequence)
	}
	b = wire.AppendCompactSize(b, uint64(len(t.outs)))
	for _, out := range t.outs {
		b = binary.LittleEndian.AppendUint64(b, uint64(out.Value))
		b = wire.AppendCompactSize(b, uint64(len(out.Script)))
		b = append(b, out.Script...)
	}
	if hasWit {
		for _, in := range t.ins {
			b = wire.AppendCompactSize(b, uint64(len(in.Witness)))
			for _, item := range in.Witness {
				b = wire.AppendCompactSize(b, uint64(len(item)))
				b = append(b, item...)
			}
		}
	}
	return binary.LittleEndian.AppendUint32(b, t.lockTime)
}

// fromTx copies a parsed transaction's fields into a rawTx (slices shared).
func fromTx(tx *wire.Tx) *rawTx {
	t := &rawTx{version: tx.Version, lockTime: tx.LockTime}
	t.ins = append([]wire.TxIn(nil), tx.Inputs...)
	t.outs = append([]wire.TxOut(nil), tx.Outputs...)
	return t
}

// mustParse encodes t and parses it back with the project's parser.
func mustParse(t testing.TB, r *rawTx) *wire.Tx {
	t.Helper()
	tx, err := wire.ParseTx(r.encode())
	if err != nil {
		t.Fatalf("ParseTx: %v", err)
	}
	return tx
}

// creditSpend builds script_tests.cpp's BuildCreditingTransaction and
// BuildSpendingTransaction pair and returns the spending transaction and
// the output it spends.
func creditSpend(t testing.TB, scriptSig, scriptPubKey []byte, witness [][]byte, amount int64) (*wire.Tx, wire.TxOut) {
	t.Helper()
	credit := &rawTx{
		version: 1,
		ins:     []wire.TxIn{{PrevIndex: 0xffffffff, Script: []byte{0, 0}, Sequence: 0xffffffff}},
		outs:    []wire.TxOut{{Value: amount, Script: scriptPubKey}},
	}
	ctx := mustParse(t, credit)
	spend := &rawTx{
		version: 1,
		ins:     []wire.TxIn{{PrevHash: ctx.TxID, PrevIndex: 0, Script: scriptSig, Sequence: 0xffffffff, Witness: witness}},
		outs:    []wire.TxOut{{Value: amount, Script: nil}},
	}
	return mustParse(t, spend), wire.TxOut{Value: amount, Script: scriptPubKey}
}

// checkTransaction is the context-free part of Core's CheckTransaction
// (src/consensus/tx_check.cpp) that tx_invalid's BADTX cases exercise; it
// returns Core's reject reason or "".
func checkTransaction(tx *wire.Tx) string {
	const maxMoney = 21_000_000 * 100_000_000
	if len(tx.Inputs) == 0 {
		return "bad-txns-vin-empty"
	}
	if len(tx.Outputs) == 0 {
		return "bad-txns-vout-empty"
	}
	if tx.BaseSize()*4 > 4_000_000 {
		return "bad-txns-oversize"
	}
	var total int64
	for _, o := range tx.Outputs {
		if o.Value < 0 {
			return "bad-txns-vout-negative"
		}
		if o.Value > maxMoney {
			return "bad-txns-vout-toolarge"
		}
		total += o.Value
		if total < 0 || total > maxMoney {
			return "bad-txns-txouttotal-toolarge"
		}
	}
	type op struct {
		h wire.Hash
		i uint32
	}
	seen := make(map[op]bool, len(tx.Inputs))
	for _, in := range tx.Inputs {
		k := op{in.PrevHash, in.PrevIndex}
		if seen[k] {
			return "bad-txns-inputs-duplicate"
		}
		seen[k] = true
	}
	if tx.IsCoinbase() {
		if n := len(tx.Inputs[0].Script); n < 2 || n > 100 {
			return "bad-cb-length"
		}
		return ""
	}
	for _, in := range tx.Inputs {
		if in.PrevIndex == 0xffffffff && in.PrevHash == (wire.Hash{}) {
			return "bad-txns-prevout-null"
		}
	}
	return ""
}

// loadJSONArray reads a Core vector file: a JSON array of arrays.
func loadJSONArray(t testing.TB, path string) [][]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v [][]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// amountFromBTC is Core's AmountFromValue for the vectors' BTC floats.
func amountFromBTC(f float64) int64 { return int64(math.Round(f * 1e8)) }

// hashFromHex parses a display-order (byte-reversed) hex hash.
func hashFromHex(s string) (wire.Hash, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return wire.Hash{}, fmt.Errorf("bad hash %q", s)
	}
	var h wire.Hash
	for i := range b {
		h[i] = b[31-i]
	}
	return h, nil
}

// verifyAll runs every input of tx under flags and returns the first error.
func verifyAll(e Engine, tx *wire.Tx, prevouts []wire.TxOut, flags Flags) error {
	v, err := e.Prepare(tx, prevouts)
	if err != nil {
		return err
	}
	for i := range tx.Inputs {
		if err := v.VerifyInput(i, flags); err != nil {
			return err
		}
	}
	return nil
}
