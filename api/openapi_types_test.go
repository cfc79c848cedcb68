package api

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"utxod/openapi"
	"utxod/scripthash"
)

// TestOpenAPIAnswersMatchTypes asks every JSON route of a small regtest
// chain and checks each 200 answer against the schema the OpenAPI document
// gives that route: every member of the body is a property of the schema
// (through $refs, nested objects and arrays) with the schema's JSON type.
// The document is generated from the types the annotations name
// (TestOpenAPIUpToDate), so an answer encoded from any other type, or a
// field added to an answer type without regenerating, fails here.
func TestOpenAPIAnswersMatchTypes(t *testing.T) {
	var spec struct {
		Paths       map[string]map[string]map[string]any `json:"paths"`
		Definitions map[string]map[string]any            `json:"definitions"`
	}
	if err := json.Unmarshal(openapi.JSON, &spec); err != nil {
		t.Fatal(err)
	}
	r := newRegtest(t, Config{})
	b1 := r.mine(payout{pkhScript, 5e8}, payout{wpkhScript, 7e8})
	r.mineN(3)
	tip := r.cs.Tip()
	cb := b1.Block.Transactions[0].TxHash().String()
	addr := r.addr(pkhScript)
	sh := scripthash.Of(pkhScript).String()
	for _, tc := range []struct {
		method, route, target, body string
	}{
		{"get", "/v1/chainstate", "/v1/chainstate", ""},
		{"get", "/v1/chainstate", "/v1/chainstate?hash_type=hash_serialized_3", ""},
		{"get", "/v1/utxos/{txid}/{vout}", "/v1/utxos/" + cb + "/0", ""},
		{"get", "/v1/tip", "/v1/tip", ""},
		{"get", "/v1/blocks/{hash}", "/v1/blocks/" + tip.Hash.String(), ""},
		{"get", "/v1/blocks/height/{height}", "/v1/blocks/height/1", ""},
		{"get", "/v1/address/{address}/utxos", "/v1/address/" + addr + "/utxos?limit=1", ""},
		{"get", "/v1/scripthash/{hash}/utxos", "/v1/scripthash/" + sh + "/utxos", ""},
		{"get", "/v1/address/{address}/summary", "/v1/address/" + addr + "/summary", ""},
		{"get", "/v1/scripthash/{hash}/summary", "/v1/scripthash/" + sh + "/summary", ""},
		{"post", "/v1/utxos/batch", "/v1/utxos/batch", `{"addresses":["` + addr + `"],"scripthashes":["` + sh + `"],"limit":1}`},
		{"post", "/v1/scan", "/v1/scan", `{"action":"start","scanobjects":["addr(` + addr + `)"]}`},
		{"get", "/v1/scan/status", "/v1/scan/status", ""},
		{"delete", "/v1/scan", "/v1/scan", ""},
		{"get", "/healthz", "/healthz", ""},
		{"get", "/rest/chaininfo.json", "/rest/chaininfo.json", ""},
		{"get", "/rest/headers/{hashext}", "/rest/headers/" + tip.Hash.String() + ".json", ""},
		{"get", "/rest/blockhashbyheight/{heightext}", "/rest/blockhashbyheight/1.json", ""},
		{"get", "/rest/getutxos/{outpoints}", "/rest/getutxos/" + cb + "-0/" + cb + "-1.json", ""},
		{"get", "/rest/spenttxouts/{hashext}", "/rest/spenttxouts/" + tip.Hash.String() + ".json", ""},
		{"get", "/rest/block/notxdetails/{hashext}", "/rest/block/notxdetails/" + tip.Hash.String() + ".json", ""},
		{"get", "/api/block/{hash}/status", "/api/block/" + tip.Hash.String() + "/status", ""},
		{"get", "/api/block/{hash}", "/api/block/" + tip.Hash.String(), ""},
		{"get", "/api/block/{hash}/txids", "/api/block/" + tip.Hash.String() + "/txids", ""},
		{"get", "/api/blocks", "/api/blocks", ""},
		{"get", "/api/blocks/{start_height}", "/api/blocks/2", ""},
		{"get", "/api/address/{address}/utxo", "/api/address/" + addr + "/utxo", ""},
		{"get", "/api/scripthash/{hash}/utxo", "/api/scripthash/" + sh + "/utxo", ""},
	} {
		name := strings.ToUpper(tc.method) + " " + tc.target
		op := spec.Paths[tc.route][tc.method]
		if op == nil {
			t.Errorf("%s: the document has no %s %s", name, tc.method, tc.route)
			continue
		}
		var body []byte
		var hdr []string
		if tc.body != "" {
			body, hdr = []byte(tc.body), []string{"Content-Type", "application/json"}
		}
		rec := do(t, r.srv, strings.ToUpper(tc.method), tc.target, body, hdr...)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s %s", name, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			continue
		}
		resp, _ := op["responses"].(map[string]any)["200"].(map[string]any)
		schema, _ := resp["schema"].(map[string]any)
		if schema == nil {
			t.Errorf("%s: the document gives no schema for the 200 answer", name)
			continue
		}
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := matchSchema(spec.Definitions, schema, v, "body"); err != nil {
			t.Errorf("%s: %v\n%s", name, err, rec.Body)
		}
	}
}

// matchSchema checks the decoded JSON value v against a Swagger 2.0 schema;
// null matches any schema (pointer fields).
func matchSchema(defs map[string]map[string]any, schema map[string]any, v any, at string) error {
	if ref, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/definitions/")
		def, ok := defs[name]
		if !ok {
			return fmt.Errorf("%s: unknown definition %s", at, ref)
		}
		return matchSchema(defs, def, v, at)
	}
	if all, ok := schema["allOf"].([]any); ok {
		for _, s := range all {
			if err := matchSchema(defs, s.(map[string]any), v, at); err != nil {
				return err
			}
		}
		return nil
	}
	if v == nil {
		return nil
	}
	typ, _ := schema["type"].(string)
	switch typ {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T, schema says object", at, v)
		}
		props, _ := schema["properties"].(map[string]any)
		for k, x := range m {
			p, ok := props[k].(map[string]any)
			if !ok {
				return fmt.Errorf("%s: member %q is not in the schema", at, k)
			}
			if err := matchSchema(defs, p, x, at+"."+k); err != nil {
				return err
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %T, schema says array", at, v)
		}
		items, _ := schema["items"].(map[string]any)
		for i, x := range a {
			if items == nil {
				break
			}
			if err := matchSchema(defs, items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %T, schema says string", at, v)
		}
	case "number", "integer":
		f, ok := v.(float64)
		if !ok || (typ == "integer" && f != math.Trunc(f)) {
			return fmt.Errorf("%s: %v, schema says %s", at, v, typ)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %T, schema says boolean", at, v)
		}
	case "":
		return fmt.Errorf("%s: schema without a type", at)
	}
	return nil
}
