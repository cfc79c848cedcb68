// Package backends defines the key-value store interface every storage engine implements, its sentinel errors and the registry stores add themselves to.
package backends
