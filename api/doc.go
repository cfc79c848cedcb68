// Package api serves utxod over HTTP: block submission, the chainstate
// (Core's gettxoutsetinfo), unspent outputs, block-index entries, Bitcoin
// Core's REST interface (chaininfo, getutxos, blockhashbyheight, headers),
// health, Prometheus metrics and the OpenAPI description.
//
// Errors are RFC 9457 problem details (application/problem+json) with a
// "reason" member; rejected blocks carry Bitcoin Core's reject reason.
// Writes need "Authorization: Bearer <token>"; reads are open.
//
// The OpenAPI (Swagger 2.0) description in ../openapi is generated from the
// annotations on the handlers by swag: run "go generate ./api" (or
// "make generate") after changing them; TestOpenAPIUpToDate fails when the
// committed file is stale.
//
//	@title						utxod API
//	@version					1
//	@description				Fully validates Bitcoin blocks and serves the UTXO set they produce; answers equal Bitcoin Core's.
//	@license.name				MIT
//	@BasePath					/
//	@securityDefinitions.apikey	BearerAuth
//	@in							header
//	@name						Authorization
//	@description				"Bearer " followed by the token in the server's cookie file (DATADIR/.cookie).
package api

//go:generate swag init --quiet -g doc.go -d ./ -o ../openapi --outputTypes json
