package validate

import (
	"errors"
	"sync/atomic"
	"testing"

	"utxod/script"
	"utxod/wire"
)

// failEngine fails the inputs listed in bad (by transaction index byte in
// the txid and input index) and counts every verification.
type failEngine struct {
	bad   map[[2]int]bool
	calls *atomic.Int64
}

func (e failEngine) Name() string { return "fail" }

func (e failEngine) Prepare(tx *wire.Tx, _ []wire.TxOut) (script.TxVerifier, error) {
	return failVerifier{e: e, tx: int(tx.TxID[0])}, nil
}

type failVerifier struct {
	e  failEngine
	tx int
}

func (v failVerifier) VerifyInput(i int, _ script.Flags) error {
	v.e.calls.Add(1)
	if v.e.bad[[2]int{v.tx, i}] {
		return &script.Error{Name: "SCRIPT_ERR_EVAL_FALSE", Code: "Script evaluated without error but finished with a false/empty top stack element"}
	}
	return nil
}

func checkJobs(txs, inputs int) []scriptJob {
	jobs := make([]scriptJob, txs)
	for t := range jobs {
		tx := &wire.Tx{Inputs: make([]wire.TxIn, inputs)}
		tx.TxID[0] = byte(t)
		jobs[t] = scriptJob{tx: tx, prevouts: make([]wire.TxOut, inputs)}
	}
	return jobs
}

// TestScriptCheckFirstFailureInBlockOrder: whichever worker finds a failure
// first, Wait reports the first failing input in block order, for every
// worker count.
func TestScriptCheckFirstFailureInBlockOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 4, 8} {
		for run := 0; run < 20; run++ {
			var calls atomic.Int64
			v := &Validator{Engine: failEngine{bad: map[[2]int]bool{{7, 3}: true, {2, 5}: true, {9, 0}: true}, calls: &calls}, Workers: workers}
			err := v.startScripts(checkJobs(12, 8), 0).Wait()
			var re *RuleError
			if !errors.As(err, &re) || re.Detail[:len("tx ")] != "tx " {
				t.Fatalf("workers %d: %v", workers, err)
			}
			want := "tx " + (&wire.Tx{TxID: wire.Hash{2}}).TxID.String() + " input 5: "
			if re.Detail[:len(want)] != want {
				t.Fatalf("workers %d: reported %q, want the first failure in block order (%q…)", workers, re.Detail, want)
			}
			if re.Reason == "" {
				t.Fatal("no reject reason")
			}
		}
	}
}

// TestScriptCheckCancelAndPipeline: checks of several blocks share the
// pool; a cancelled check skips what has not started and reports
// ErrCheckCancelled, the others still verify every input.
func TestScriptCheckCancelAndPipeline(t *testing.T) {
	var calls atomic.Int64
	v := &Validator{Engine: failEngine{calls: &calls}, Workers: 1} // no background workers: nothing runs before Wait
	a := v.startScripts(checkJobs(3, 4), 0)
	b := v.startScripts(checkJobs(5, 4), 0)
	b.Cancel()
	if err := b.Wait(); !errors.Is(err, ErrCheckCancelled) {
		t.Fatalf("cancelled check: %v", err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("a cancelled check verified %d inputs", n)
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 12 {
		t.Fatalf("%d verifications for 3×4 inputs", n)
	}
	empty := v.startScripts(nil, 0)
	select {
	case <-empty.Done():
	default:
		t.Fatal("a check without inputs is not done at once")
	}
	if err := empty.Wait(); err != nil {
		t.Fatal(err)
	}
}
