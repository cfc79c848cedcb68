package storebench

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/validate"
	"utxod/wire"
)

// TestGenerateValid connects a small generated chain with full validation
// and checks the UTXO count and tip against the generator's summary; the
// same seed gives the same bytes.
func TestGenerateValid(t *testing.T) {
	cfg := Config{Seed: 7, Blocks: 112, TxsPerBlock: 300}
	var buf bytes.Buffer
	s, err := Generate(cfg, &buf)
	if err != nil {
		t.Fatal(err)
	}
	p := params.RegTest()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: store.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	r := wire.NewBlockFileReader(bytes.NewReader(buf.Bytes()), p.Magic)
	var inputs int
	for {
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ProcessBlock(raw)
		if err != nil {
			t.Fatalf("height %d: %v", res.Height, err)
		}
		if res.Status != chainstate.StatusConnected {
			t.Fatalf("height %d: %s", res.Height, res.Status)
		}
		inputs += res.Inputs
	}
	st := cs.Stats()
	if int64(st.TxOuts) != s.UTXOs || st.BestBlock != s.Tip || int(st.Height) != s.Blocks || int64(inputs) != s.Inputs {
		t.Fatalf("chainstate %d utxos at %d %s, %d inputs; generator %+v", st.TxOuts, st.Height, st.BestBlock, inputs, s)
	}
	if s.Bytes != int64(buf.Len()) {
		t.Fatalf("bytes %d, file %d", s.Bytes, buf.Len())
	}
	t.Logf("%+v (%.2f outputs/tx in the set)", s, float64(st.TxOuts)/float64(st.Transactions))
	var again bytes.Buffer
	if _, err := Generate(cfg, &again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatal("not deterministic")
	}
}
