// Package openapi holds the generated OpenAPI specification.
package openapi
