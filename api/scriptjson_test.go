package api

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"utxod/params"
)

// TestDescribeScriptCore compares describeScript with Core's data-driven
// decodescript results (regtest), field by field.
func TestDescribeScriptCore(t *testing.T) {
	raw, err := os.ReadFile("testdata/rpc_decodescript.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Script string
		Want   ScriptPubKey
	}
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(raw, &pairs); err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		var c struct {
			Script string
			Want   ScriptPubKey
		}
		if json.Unmarshal(p[0], &c.Script) != nil || json.Unmarshal(p[1], &c.Want) != nil {
			t.Fatalf("bad case %s", p[0])
		}
		cases = append(cases, c)
	}
	if len(cases) < 10 {
		t.Fatalf("%d cases", len(cases))
	}
	reg := params.RegTest()
	for _, c := range cases {
		s, err := hex.DecodeString(c.Script)
		if err != nil {
			t.Fatal(err)
		}
		got := describeScript(s, reg)
		c.Want.Hex = c.Script // decodescript has no "hex" of its input
		if got != c.Want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.Script, got, c.Want)
		}
	}
}
