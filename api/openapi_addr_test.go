package api

import (
	"encoding/json"
	"testing"

	"utxod/openapi"
)

// The OpenAPI document covers the address, Esplora and scan routes.
func TestOpenAPIAddressRoutes(t *testing.T) {
	var spec struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(openapi.JSON, &spec); err != nil {
		t.Fatal(err)
	}
	for path, method := range map[string]string{
		"/api/blocks/tip/height": "get", "/api/blocks/tip/hash": "get", "/api/block-height/{height}": "get",
		"/api/block/{hash}/status": "get", "/api/address/{address}/utxo": "get", "/api/scripthash/{hash}/utxo": "get",
		"/v1/address/{address}/utxos": "get", "/v1/scripthash/{hash}/utxos": "get", "/v1/address/{address}/summary": "get",
		"/v1/scripthash/{hash}/summary": "get", "/v1/utxos/batch": "post", "/v1/scan": "post", "/v1/scan/status": "get",
	} {
		if spec.Paths[path][method] == nil {
			t.Errorf("spec lacks %s %s", method, path)
		}
	}
	if spec.Paths["/v1/scan"]["delete"] == nil {
		t.Error("spec lacks DELETE /v1/scan")
	}
}
