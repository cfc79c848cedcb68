package script

import (
	"encoding/hex"
	"testing"
)

// Encodings follow Core's CScriptNum::serialize and CScript::push_int64
// (script.h); 227931 is mainnet's BIP34 activation height, whose coinbase
// starts 03 5b 7a 03.
func TestScriptNumEncoding(t *testing.T) {
	nums := []struct {
		n    int64
		want string
	}{
		{0, ""}, {1, "01"}, {-1, "81"}, {127, "7f"}, {128, "8000"}, {-128, "8080"},
		{255, "ff00"}, {256, "0001"}, {32767, "ff7f"}, {32768, "008000"}, {-32768, "008080"},
	}
	for _, c := range nums {
		if got := hex.EncodeToString(AppendScriptNum(nil, c.n)); got != c.want {
			t.Errorf("AppendScriptNum(%d) = %s, want %s", c.n, got, c.want)
		}
	}
	pushes := []struct {
		n    int64
		want string
	}{
		{0, "00"}, {-1, "4f"}, {1, "51"}, {16, "60"}, {17, "0111"}, {-2, "0182"}, {227931, "035b7a03"},
	}
	for _, c := range pushes {
		if got := hex.EncodeToString(AppendPushInt64([]byte{0xaa}, c.n)); got != "aa"+c.want {
			t.Errorf("AppendPushInt64(%d) = %s, want aa%s", c.n, got, c.want)
		}
	}
}
