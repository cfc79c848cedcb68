package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	bwire "github.com/btcsuite/btcd/wire/v2"
)

// TestBlockIDsMatchBtcd: the ids Block.Parse hashes in one batch (segwit
// transactions as their stripped serialization and their raw bytes) equal
// btcd's TxHash and WitnessHash, for blocks mixing segwit and legacy
// transactions of many sizes, with every count from 1 to 60.
func TestBlockIDsMatchBtcd(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 60; n++ {
		msg := bwire.MsgBlock{Header: bwire.BlockHeader{Version: 4}}
		for i := 0; i < n; i++ {
			tx := bwire.NewMsgTx(2)
			for k := 0; k < 1+rng.IntN(3); k++ {
				var h chainhash.Hash
				for j := range h {
					h[j] = byte(rng.Uint32())
				}
				in := bwire.NewTxIn(bwire.NewOutPoint(&h, uint32(k)), make([]byte, rng.IntN(120)), nil)
				if rng.IntN(2) == 0 {
					in.Witness = bwire.TxWitness{make([]byte, 1+rng.IntN(80)), make([]byte, 33)}
				}
				tx.AddTxIn(in)
			}
			for k := 0; k < 1+rng.IntN(4); k++ {
				tx.AddTxOut(bwire.NewTxOut(int64(rng.IntN(1e8)), make([]byte, rng.IntN(60))))
			}
			tx.LockTime = rng.Uint32()
			msg.AddTransaction(tx)
		}
		var buf bytes.Buffer
		if err := msg.Serialize(&buf); err != nil {
			t.Fatal(err)
		}
		b, err := ParseBlock(buf.Bytes())
		if err != nil {
			t.Fatalf("%d txs: %v", n, err)
		}
		for i := range b.Txs {
			compareWithBtcd(t, &b.Txs[i], msg.Transactions[i])
		}
	}
}
