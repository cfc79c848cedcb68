package merkle

//go:generate go run -C _asm . -out ../sha256d_amd64.s -stubs ../sha256d_amd64.go -pkg merkle
