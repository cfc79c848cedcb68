package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/swaggo/swag/gen"

	"utxod/openapi"
)

// updateOpenAPI makes TestOpenAPIUpToDate write the regenerated document
// to openapi/swagger.json instead of comparing (the go:generate line in
// docs.go).
var updateOpenAPI = flag.Bool("update-openapi", false, "write the regenerated OpenAPI document to ../openapi/swagger.json")

// TestOpenAPIUpToDate regenerates the OpenAPI description from the handler
// annotations and the answer types they name, which are the types the
// handlers encode (swag as a library), and compares it with the committed
// openapi/swagger.json; with -update-openapi it writes it instead.
func TestOpenAPIUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("swag parses the package; skipped in -short")
	}
	out := t.TempDir()
	err := gen.New().Build(&gen.Config{
		SearchDir:          "./,../events", // the event types live in package events
		MainAPIFile:        "doc.go",
		OutputDir:          out,
		OutputTypes:        []string{"json"},
		PropNamingStrategy: "camelcase",
		ParseDepth:         100,
		ParseGoList:        true,
		OverridesFile:      ".swaggo",
		LeftTemplateDelim:  "{{",
		RightTemplateDelim: "}}",
		CollectionFormat:   "csv",
		Debugger:           log.New(io.Discard, "", 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := os.ReadFile(filepath.Join(out, "swagger.json"))
	if err != nil {
		t.Fatal(err)
	}
	if *updateOpenAPI {
		if err := os.WriteFile("../openapi/swagger.json", fresh, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skip("wrote ../openapi/swagger.json; rebuild to embed it")
	}
	committed, err := os.ReadFile("../openapi/swagger.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatal("openapi/swagger.json is stale: run `go generate ./api` (make generate) and commit it")
	}
	if !bytes.Equal(committed, openapi.JSON) {
		t.Fatal("embedded spec differs from the file")
	}
	var spec struct {
		Swagger string                    `json:"swagger"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(committed, &spec); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v1/blocks", "/v1/chainstate", "/v1/utxos/{txid}/{vout}", "/v1/blocks/{hash}", "/v1/tip",
		"/v1/blocks/height/{height}", "/rest/chaininfo.json", "/rest/getutxos/{outpoints}", "/rest/headers/{hashext}",
		"/rest/blockhashbyheight/{heightext}", "/rest/block/{hashext}", "/rest/block/notxdetails/{hashext}", "/healthz", "/metrics", "/openapi.json", "/v1/snapshot"} {
		if spec.Paths[p] == nil {
			t.Errorf("spec lacks %s", p)
		}
	}
}
