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
// the validator's workers (Core's CCheckQueue). Transactions are added as
// the connecting loop resolves their inputs (Core's ConnectBlock hands each
// transaction's checks to its CCheckQueueControl inside the loop), so the
// workers verify the first transactions while the loop is still resolving
// the next ones; seal ends the additions, abort drops the check when the
// loop fails a rule. Wait gives the verdict once sealed. The transactions
// and prevouts it reads must stay unchanged until Wait returns: a deferred
// check owns copies of the prevout scripts (see ConnectBlockDeferred).
//
// Checks of consecutive blocks share one pool of v.Workers slots, handed
// out first come first served, so an older block's inputs run before a
// newer block's while the caller connects the next block (cross-block
// pipelining).
type ScriptCheck struct {
	v         *Validator
	jobs      []scriptJob  // len: transactions that may be added; filled up to nJobs
	tasks     []scriptTask // len: every input of the block; filled up to published
	flags     script.Flags
	verifiers []script.TxVerifier
	prepErr   []error
	once      []sync.Once
	errs      []error
	nJobs     int // owner only

	published atomic.Int64 // tasks visible to the workers
	sealed    atomic.Bool  // no more tasks will be published
	mu        sync.Mutex   // with cond: workers waiting for tasks
	cond      sync.Cond
	waiting   atomic.Int32

	next      atomic.Int64 // next task to claim
	finished  atomic.Int64 // tasks claimed and run (or skipped)
	firstFail atomic.Int64 // lowest failing task; -1 once cancelled
	done      chan struct{}
	doneOnce  sync.Once
}

// beginScripts returns an empty check for up to jobs transactions with
// inputs inputs in all, and starts its background workers (which wait for
// add).
func (v *Validator) beginScripts(jobs, inputs int, flags script.Flags) *ScriptCheck {
	c := &ScriptCheck{v: v, flags: flags, done: make(chan struct{})}
	c.cond.L = &c.mu
	c.firstFail.Store(int64(inputs))
	if inputs == 0 {
		c.sealed.Store(true)
		c.finish()
		return c
	}
	c.jobs = make([]scriptJob, jobs)
	c.tasks = make([]scriptTask, inputs)
	c.verifiers = make([]script.TxVerifier, jobs)
	c.prepErr = make([]error, jobs)
	c.once = make([]sync.Once, jobs)
	c.errs = make([]error, inputs)
	sem := v.slots()
	for w := min(cap(sem), inputs); w > 0; w-- { // none with one worker: Wait does it all
		go func() {
			sem <- struct{}{} // channel senders queue FIFO: older blocks first
			c.work()
			<-sem
		}()
	}
	return c
}

// add publishes a transaction's inputs to the workers. Owner only; the
// check must not be sealed, and the inputs must fit the sizes given to
// beginScripts.
func (c *ScriptCheck) add(j scriptJob) {
	n := c.published.Load()
	c.jobs[c.nJobs] = j
	for i := range j.tx.Inputs {
		c.tasks[n] = scriptTask{int32(c.nJobs), int32(i)}
		n++
	}
	c.nJobs++
	c.published.Store(n)
	c.wake()
}

// seal ends the additions: every input of the block has been added.
func (c *ScriptCheck) seal() {
	if p := c.published.Load(); p != int64(len(c.tasks)) {
		panic("validate: script check sealed with " + strconv.FormatInt(p, 10) + " of " + strconv.Itoa(len(c.tasks)) + " inputs")
	}
	c.sealed.Store(true)
	c.wake()
}

// abort drops a check whose block failed another rule: what has not
// started is skipped, the workers return, and Wait reports
// ErrCheckCancelled.
func (c *ScriptCheck) abort() {
	c.firstFail.Store(-1)
	c.sealed.Store(true)
	c.wake()
	c.finish()
}

func (c *ScriptCheck) finish() { c.doneOnce.Do(func() { close(c.done) }) }

// wake wakes workers waiting for tasks (the atomics order a worker's
// registration before its re-check, so a publication it missed finds it
// registered).
func (c *ScriptCheck) wake() {
	if c.waiting.Load() > 0 {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	}
}

// await blocks until task k is published (true) or the check is sealed
// without it (false).
func (c *ScriptCheck) await(k int64) bool {
	c.mu.Lock()
	c.waiting.Add(1)
	for k >= c.published.Load() && !c.sealed.Load() {
		c.cond.Wait()
	}
	c.waiting.Add(-1)
	c.mu.Unlock()
	return k < c.published.Load()
}

// startScripts returns a sealed check of jobs.
func (v *Validator) startScripts(jobs []scriptJob, flags script.Flags) *ScriptCheck {
	n := 0
	for _, j := range jobs {
		n += len(j.tx.Inputs)
	}
	c := v.beginScripts(len(jobs), n, flags)
	if n == 0 {
		return c
	}
	for _, j := range jobs {
		c.add(j)
	}
	c.seal()
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

// work claims and runs published tasks until none are left. Once an input
// fails, later inputs are skipped (Core's CCheckQueue stops at the first
// failure; the reported one is the first in block order).
func (c *ScriptCheck) work() {
	n := int64(len(c.tasks))
	for {
		k := c.next.Load()
		if k >= n {
			return
		}
		if k >= c.published.Load() {
			if !c.await(k) {
				return // aborted
			}
			continue
		}
		if !c.next.CompareAndSwap(k, k+1) {
			continue
		}
		if k < c.firstFail.Load() {
			c.run(k)
		}
		if c.finished.Add(1) == n {
			c.finish()
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
