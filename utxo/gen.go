package utxo

//go:generate go run -C _asm . -out ../chacha_amd64.s -stubs ../chacha_stub_amd64.go -pkg utxo
//go:generate go run -C _asm ./mul3072 -out ../mul3072_amd64.s -stubs ../mul3072_stub_amd64.go -pkg utxo
//go:generate go run -C _asm ./sha256x16 -out ../sha256x16_amd64.s -stubs ../sha256x16_stub_amd64.go -pkg utxo
