package validate

// Consensus constants (Core's src/consensus/consensus.h, amount.h,
// primitives/transaction.h, script/script.h).
const (
	MaxBlockWeight      = 4_000_000
	MaxBlockSigOpsCost  = 80_000
	WitnessScaleFactor  = 4
	MaxMoney            = 21_000_000 * 100_000_000
	LocktimeThreshold   = 500_000_000
	SequenceFinal       = 0xffffffff
	SequenceDisableFlag = 1 << 31
	SequenceTypeFlag    = 1 << 22
	SequenceLockMask    = 0x0000ffff
	SequenceGranularity = 9
	// BIP34ImpliesBIP30Limit is the height from which BIP30 is enforced
	// again although BIP34 is active (validation.cpp).
	BIP34ImpliesBIP30Limit = 1_983_702
)

// MoneyRange is Core's MoneyRange.
func MoneyRange(v int64) bool { return v >= 0 && v <= MaxMoney }
