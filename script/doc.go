// Package script verifies transaction input scripts behind a small Engine interface so that engines can be measured against each other.
package script
