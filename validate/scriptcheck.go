package validate

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"utxod/script"
	"utxod/wire"
)

// ErrCheckCancelled is what Wait returns for a ScriptCheck cancelled before
// it finished (its block's verdict no longer matters).
var ErrCheckCancelled = errors.New("validate: script check cancelled")

// scriptJob is one transaction whose inputs await script verification.
type scriptJob struct {
	tx       *wire.Tx
	prevouts []wire.TxOut
}

type scriptTask struct{ job, input int32 }

// ScriptCheck is the script verification of one block's inputs, running on
// the validator's workers (Core's CCheckQueue). The block's other rules have
// already passed when it exists; Wait gives the verdict. The transactions
// and prevouts it reads must stay unchanged until Wait returns: a deferred
// check owns copies of the prevout scripts (see ConnectBlockDeferred).
//
// Checks of consecutive blocks share one pool of v.Workers slots, handed
// out first come first served, so an older block's inputs run before a
// newer block's while the caller connects the next block (cross-block
// pipelining).
type ScriptCheck struct {
	v         *Validator
	jobs      []scriptJob
	tasks     []scriptTask
	flags     script.Flags
	verifiers []script.TxVerifier
	prepErr   []error
	once      []sync.Once
	errs      []error

	next      atomic.Int64 // next task to claim
	finished  atomic.Int64 // tasks claimed and run (or skipped)
	firstFail atomic.Int64 // lowest failing task; -1 once cancelled
	done      chan struct{}
}

// startScripts queues the inputs of jobs and returns at once.
func (v *Validator) startScripts(jobs []scriptJob, flags script.Flags) *ScriptCheck {
	c := &ScriptCheck{v: v, jobs: jobs, flags: flags, done: make(chan struct{})}
	for j := range jobs {
		for i := range jobs[j].tx.Inputs {
			c.tasks = append(c.tasks, scriptTask{int32(j), int32(i)})
		}
	}
	n := len(c.tasks)
	c.firstFail.Store(int64(n))
	if n == 0 {
		close(c.done)
		return c
	}
	c.verifiers = make([]script.TxVerifier, len(jobs))
	c.prepErr = make([]error, len(jobs))
	c.once = make([]sync.Once, len(jobs))
	c.errs = make([]error, n)
	sem := v.slots()
	for w := min(cap(sem), n); w > 0; w-- { // none with one worker: Wait does it all
		go func() {
			sem <- struct{}{} // channel senders queue FIFO: older blocks first
			c.work()
			<-sem
		}()
	}
	return c
}

// slots is the background-worker semaphore shared by every check of v:
// Workers-1 slots, because the goroutine that calls Wait verifies too (as
// Core's CCheckQueue master does). Runnable verifiers never outnumber the
// cores: a verifier inside a cgo call keeps its P, so a surplus goroutine —
// the one connecting the next block — would wait for the scheduler's
// monitor to retake a P (up to 10 ms each time).
func (v *Validator) slots() chan struct{} {
	v.poolOnce.Do(func() { v.pool = make(chan struct{}, max(v.Workers-1, 0)) })
	return v.pool
}

// work claims and runs tasks until none are left. Once an input fails,
// later inputs are skipped (Core's CCheckQueue stops at the first failure;
// the reported one is the first in block order).
func (c *ScriptCheck) work() {
	n := int64(len(c.tasks))
	for {
		k := c.next.Add(1) - 1
		if k >= n {
			return
		}
		if k < c.firstFail.Load() {
			c.run(k)
		}
		if c.finished.Add(1) == n {
			close(c.done)
		}
	}
}

func (c *ScriptCheck) run(k int64) {
	t := c.tasks[k]
	job := &c.jobs[t.job]
	c.once[t.job].Do(func() {
		c.verifiers[t.job], c.prepErr[t.job] = c.v.Engine.Prepare(job.tx, job.prevouts)
	})
	err := c.prepErr[t.job]
	if err == nil {
		err = c.verifiers[t.job].VerifyInput(int(t.input), c.flags)
	}
	if err == nil {
		return
	}
	c.errs[k] = err
	for {
		cur := c.firstFail.Load()
		if cur < 0 || k >= cur || c.firstFail.CompareAndSwap(cur, k) {
			return
		}
	}
}

// Done is closed once every input has been verified or skipped.
func (c *ScriptCheck) Done() <-chan struct{} { return c.done }

// Cancel skips the inputs not yet started; Wait then reports
// ErrCheckCancelled unless an input had already failed.
func (c *ScriptCheck) Cancel() {
	for {
		cur := c.firstFail.Load()
		if cur < int64(len(c.tasks)) || c.firstFail.CompareAndSwap(cur, -1) {
			return
		}
	}
}

// Wait verifies the inputs no worker has claimed yet, waits for the rest
// and returns the first failing input's error in block order (a
// *RuleError with Core's reason), or nil.
func (c *ScriptCheck) Wait() error {
	c.work()
	<-c.done
	k := c.firstFail.Load()
	if k < 0 {
		return ErrCheckCancelled
	}
	if k >= int64(len(c.tasks)) {
		return nil
	}
	t := c.tasks[k]
	tx := c.jobs[t.job].tx
	return &RuleError{Reason: script.RejectReason(c.errs[k]), Detail: "tx " + tx.TxID.String() + " input " + strconv.Itoa(int(t.input)) + ": " + c.errs[k].Error()}
}
