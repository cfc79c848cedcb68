package validate

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

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
		return &script.Error{Code: script.ErrEvalFalse}
	}
	return nil
}

// scriptJob is one transaction and its prevouts, as ScriptCheck.add takes
// them.
type scriptJob struct {
	tx       *wire.Tx
	prevouts []wire.TxOut
}

// startScripts queues the inputs of jobs in one sealed check.
func (v *Validator) startScripts(jobs []scriptJob, flags script.Flags) *ScriptCheck {
	n := 0
	for _, j := range jobs {
		n += len(j.tx.Inputs)
	}
	c := v.newScriptCheck(len(jobs), n, flags)
	for _, j := range jobs {
		c.add(j.tx, j.prevouts)
	}
	c.seal()
	return c
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

// gateEngine blocks every verification until release is closed, and counts
// the verifications started and running.
type gateEngine struct {
	release          chan struct{}
	started, running *atomic.Int64
}

func (e gateEngine) Name() string { return "gate" }

func (e gateEngine) Prepare(*wire.Tx, []wire.TxOut) (script.TxVerifier, error) { return e, nil }

func (e gateEngine) VerifyInput(int, script.Flags) error {
	e.started.Add(1)
	e.running.Add(1)
	defer e.running.Add(-1)
	<-e.release
	return nil
}

// TestScriptCheckStreams: the workers verify a transaction's inputs as soon
// as it is added, before the check is sealed (Core's ConnectBlock feeds its
// check queue the same way), and Wait after seal covers every input.
func TestScriptCheckStreams(t *testing.T) {
	var calls atomic.Int64
	v := &Validator{Engine: failEngine{calls: &calls}, Workers: 2}
	jobs := checkJobs(4, 3)
	c := v.newScriptCheck(len(jobs), 12, 0)
	for i, j := range jobs {
		c.add(j.tx, j.prevouts)
		deadline := time.Now().Add(10 * time.Second)
		for calls.Load() < int64(3*(i+1)) {
			if time.Now().After(deadline) {
				t.Fatalf("transaction %d's inputs not verified while the check is open (%d verifications)", i, calls.Load())
			}
			time.Sleep(time.Millisecond)
		}
	}
	select {
	case <-c.Done():
		t.Fatal("done before it was sealed")
	default:
	}
	c.seal()
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 12 {
		t.Fatalf("%d verifications for 4×3 inputs", n)
	}
}

// TestScriptCheckAbandon: a block refused by another rule abandons its
// check part-way; abandon returns only once no worker runs one of its
// inputs (they may read the coin view until then), and nothing starts
// after it.
func TestScriptCheckAbandon(t *testing.T) {
	var started, running atomic.Int64
	e := gateEngine{release: make(chan struct{}), started: &started, running: &running}
	v := &Validator{Engine: e, Workers: 2}
	jobs := checkJobs(5, 2)
	c := v.newScriptCheck(len(jobs), 10, 0)
	c.add(jobs[0].tx, jobs[0].prevouts)
	c.add(jobs[1].tx, jobs[1].prevouts)
	for started.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	returned := make(chan struct{})
	go func() {
		c.abandon()
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("abandon returned while a verification was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(e.release)
	<-returned
	if n := running.Load(); n != 0 {
		t.Fatalf("%d verifications still running after abandon", n)
	}
	if n := started.Load(); n != 1 {
		t.Fatalf("%d verifications started; only the one running at abandon should have", n)
	}
	if err := c.Wait(); !errors.Is(err, ErrCheckCancelled) {
		t.Fatalf("abandoned check: %v", err)
	}
}
