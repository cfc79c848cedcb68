package events

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"utxod/wire"
)

// Event kinds (the SSE "event:" field, the WebSocket message's "event").
const (
	KindBlockConnected    = "block_connected"
	KindBlockDisconnected = "block_disconnected"
	KindOutputCreated     = "output_created"
	KindOutputSpent       = "output_spent"
	KindOutputRemoved     = "output_removed"  // reversal of output_created
	KindOutputRestored    = "output_restored" // reversal of output_spent
	KindSpent             = "spent"
	KindUnspent           = "unspent" // reversal of spent
	KindReset             = "reset"
	KindTweaks            = "tweaks" // a connected block's BIP352 tweaks (Spec.Tweaks)
)

// Cursor names a block of the chain: a client's position in the stream.
// Its text form is "height:hash" (hash in the usual reversed hex).
type Cursor struct {
	Height int32
	Hash   wire.Hash
}

// String is "height:hash".
func (c Cursor) String() string { return strconv.Itoa(int(c.Height)) + ":" + c.Hash.String() }

// ErrBadCursor reports a cursor that is not "height:hash".
var ErrBadCursor = errors.New("events: a cursor is height:hash (the id of an event)")

// ParseCursor reads "height:hash".
func ParseCursor(s string) (Cursor, error) {
	hs, bs, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Cursor{}, ErrBadCursor
	}
	h, err := strconv.ParseInt(hs, 10, 32)
	if err != nil || h < 0 {
		return Cursor{}, ErrBadCursor
	}
	hash, err := wire.ParseHash(bs)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %w", ErrBadCursor, err)
	}
	return Cursor{Height: int32(h), Hash: hash}, nil
}

// Message is one event of a stream, transport-neutral: Kind, the cursor a
// client resumes from to receive it again, and the event's JSON (one of the
// types below, no trailing newline). Messages are shared between streams
// and must not be modified.
type Message struct {
	Kind   string
	Cursor Cursor
	Data   []byte
}

// BlockConnected is the block_connected event: the block joined the active
// chain. Its cursor is the block.
type BlockConnected struct {
	Hash     string `json:"hash" example:"0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"`
	Height   int32  `json:"height" example:"101"`
	PrevHash string `json:"prev_hash" example:"3f6e3b1e9f0cfc7e57b51d9a4e5b1d1ee3f1a8f1b6f1c0f8e4a8e0a3c0b1d2e3"`
}

// BlockDisconnected is the block_disconnected event: the block left the
// active chain (a reorganisation), after the reversals of its events. Its
// cursor is the block's parent.
type BlockDisconnected struct {
	Hash     string `json:"hash" example:"0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"`
	Height   int32  `json:"height" example:"101"`
	PrevHash string `json:"prev_hash" example:"3f6e3b1e9f0cfc7e57b51d9a4e5b1d1ee3f1a8f1b6f1c0f8e4a8e0a3c0b1d2e3"`
}

// OutputCreated is the output_created event: a block created an output
// paying a watched script. Height and Block name that block.
type OutputCreated struct {
	Outpoint   string `json:"outpoint" example:"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b:0"`
	Value      int64  `json:"value" example:"5000000000"`
	Scripthash string `json:"scripthash" example:"6191c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b"`
	Height     int32  `json:"height" example:"101"`
	Block      string `json:"block" example:"0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"`
}

// OutputSpent is the output_spent event: a block spent an output paying a
// watched script, by input InputIndex of SpendingTxid.
type OutputSpent struct {
	Outpoint     string `json:"outpoint" example:"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b:0"`
	Value        int64  `json:"value" example:"5000000000"`
	Scripthash   string `json:"scripthash" example:"6191c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b"`
	SpendingTxid string `json:"spending_txid" example:"f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16"`
	InputIndex   uint32 `json:"input_index" example:"0"`
	Height       int32  `json:"height" example:"102"`
	Block        string `json:"block" example:"0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"`
}

// OutputRemoved is the output_removed event: the block that created the
// output left the active chain, so the output no longer exists (the
// reversal of output_created; same fields).
type OutputRemoved OutputCreated

// OutputRestored is the output_restored event: the block that spent the
// output left the active chain, so the output is unspent again (the
// reversal of output_spent; same fields).
type OutputRestored OutputSpent

// Spent is the spent event: a block spent a watched outpoint.
type Spent struct {
	Outpoint     string `json:"outpoint" example:"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b:0"`
	SpendingTxid string `json:"spending_txid" example:"f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16"`
	InputIndex   uint32 `json:"input_index" example:"0"`
	Height       int32  `json:"height" example:"102"`
	Block        string `json:"block" example:"0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"`
}

// Unspent is the unspent event: the block that spent a watched outpoint
// left the active chain (the reversal of spent; same fields).
type Unspent Spent

// Tweaks is the tweaks event of a subscription with Tweaks: the BIP352
// tweak data of every silent payment eligible transaction of a connected
// block (possibly none), in block order, before its block_connected. A
// disconnected block sends nothing more than its block_disconnected.
type Tweaks struct {
	Height int32     `json:"height" example:"101"`
	Hash   string    `json:"hash" example:"0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"`
	Tweaks []TxTweak `json:"tweaks"`
}

// TxTweak is one eligible transaction of a tweaks event: its tweak
// (input_hash·A, a compressed point) and its largest taproot output value.
type TxTweak struct {
	Txid            string `json:"txid" example:"f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16"`
	Tweak           string `json:"tweak" example:"03d4a9b7d7c6bdbd9dd56b0f7e7c3e5e1fb1b8d1e4c4a7c5a8e2a0f5b6b1d2c3e4"`
	MaxTaprootValue int64  `json:"max_taproot_value" example:"100000"`
}

// Reset is the reset event: the stream continues from the fork block
// (Height, Hash) without the reversals of the blocks above it that the
// client saw, because the node no longer has their data. A client drops
// what it learnt from blocks above Height; the events of the active chain
// from there follow. Its cursor is the fork.
type Reset struct {
	Height int32  `json:"height" example:"100"`
	Hash   string `json:"hash" example:"3f6e3b1e9f0cfc7e57b51d9a4e5b1d1ee3f1a8f1b6f1c0f8e4a8e0a3c0b1d2e3"`
	Reason string `json:"reason" example:"the blocks above the fork that the cursor names are no longer stored"`
}
