package mainnetgen

import "testing"

// BenchmarkMuHashInsert is one coin's MuHash3072 Insert (SHA-256, ChaCha20
// keystream, a 3072-bit modular multiplication).
func BenchmarkMuHashInsert(b *testing.B) {
	m := NewMuHash()
	data := make([]byte, 80)
	for i := 0; b.Loop(); i++ {
		data[0], data[1] = byte(i), byte(i>>8)
		m.Insert(data)
	}
}

// BenchmarkGenerate is the whole generator per coin (one MuHash worker).
func BenchmarkGenerate(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if _, err := Generate(Config{Coins: 100_000, Seed: 1, Height: 1_000, Workers: 1}, dir); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*100_000/b.Elapsed().Seconds(), "coins/s")
}
