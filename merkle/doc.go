// Package merkle computes Bitcoin merkle roots with CVE-2012-2459 mutation detection, using runtime-dispatched SHA-256d kernels.
package merkle
