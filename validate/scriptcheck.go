package validate

import (
	"errors"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"utxod/script"
	"utxod/wire"
)

// ErrCheckCancelled is what Wait returns for a ScriptCheck cancelled before
// it finished (its block's verdict no longer matters).
var ErrCheckCancelled = errors.New("validate: script check cancelled")

type scriptTask struct{ job, input int32 }

// yieldEvery is how many inputs a worker verifies between reschedules
// (work): about 1 ms of signatures, far below sysmon's 10 ms.
const yieldEvery = 32

// noFailure is firstFail while no input has failed.
const noFailure = math.MaxInt64

// ScriptCheck is the script verification of one block's inputs, running on
// the validator's workers (Core's CCheckQueue). The transactions and
// prevouts it reads must stay unchanged until Wait returns: a deferred
// check owns copies of the prevout scripts (see ConnectBlockDeferred).
//
// Inputs are added while the block connects, a transaction at a time, and
// the workers verify them as they come, as Core's ConnectBlock hands each
// transaction's checks to its CCheckQueueControl: the block's other rules
// run on one core while its signatures start on the other. Wait, after
// seal, gives the verdict; a block refused by another rule abandons its
// check.
//
// Checks of consecutive blocks share one pool of v.Workers slots, handed
// out first come first served, so an older block's inputs run before a
// newer block's while the caller connects the next block (cross-block
// pipelining).
type ScriptCheck struct {
	v     *Validator
	flags script.Flags
	// txs, verifiers and tasks have their final length from the start:
	// workers read the published prefix (tasks[:avail]) while add writes
	// beyond it, at nJobs and nTasks (the adder's alone). A job is one
	// transaction, prepared by add before its inputs are published; its
	// verifier holds the prevouts.
	txs           []*wire.Tx
	tasks         []scriptTask
	nJobs, nTasks int
	verifiers     []script.TxVerifier
	prepErr       []error
	errs          []error

	avail     atomic.Int64 // tasks published
	sealed    atomic.Bool  // no more tasks: avail is final
	next      atomic.Int64 // next task to claim
	finished  atomic.Int64 // published tasks claimed and run (or skipped)
	firstFail atomic.Int64 // lowest failing task; noFailure; -1 once cancelled
	closed    atomic.Bool
	done      chan struct{}

	// A worker that has claimed a task not yet published waits on cond.
	mu      sync.Mutex
	cond    sync.Cond
	waiters atomic.Int32
}

// newScriptCheck returns an open check for up to maxJobs transactions and
// maxTasks inputs, its workers started; add fills it and seal closes it.
// With maxTasks 0 it is sealed and done at once.
func (v *Validator) newScriptCheck(maxJobs, maxTasks int, flags script.Flags) *ScriptCheck {
	c := &ScriptCheck{v: v, flags: flags, done: make(chan struct{})}
	c.cond.L = &c.mu
	c.firstFail.Store(noFailure)
	if maxTasks == 0 {
		c.seal()
		return c
	}
	c.txs = make([]*wire.Tx, maxJobs)
	c.tasks = make([]scriptTask, maxTasks)
	c.verifiers = make([]script.TxVerifier, maxJobs)
	c.prepErr = make([]error, maxJobs)
	c.errs = make([]error, maxTasks)
	sem := v.slots()
	for w := min(cap(sem), maxTasks); w > 0; w-- { // none with one worker: Wait does it all
		go func() {
			sem <- struct{}{} // channel senders queue FIFO: older blocks first
			c.work()
			<-sem
		}()
	}
	return c
}

// add publishes the inputs of tx, spending prevouts, to the workers. Only
// the goroutine that connects the block calls it, before seal; the jobs and
// inputs together must fit the capacities given to newScriptCheck.
func (c *ScriptCheck) add(tx *wire.Tx, prevouts []wire.TxOut) {
	j := c.nJobs
	c.txs[j] = tx
	// Prepared here, while tx is in this core's cache, rather than by the
	// first worker to claim one of its inputs (a sync.Once per job).
	c.verifiers[j], c.prepErr[j] = c.v.Engine.Prepare(tx, prevouts)
	c.nJobs++
	for i := range tx.Inputs {
		c.tasks[c.nTasks] = scriptTask{int32(j), int32(i)}
		c.nTasks++
	}
	c.avail.Store(int64(c.nTasks))
	c.wake()
}

// seal says no input will be added: the check finishes once the published
// ones have run.
func (c *ScriptCheck) seal() {
	c.sealed.Store(true)
	c.wake()
	if c.finished.Load() == c.avail.Load() {
		c.closeDone()
	}
}

// abandon seals and cancels the check and waits until no worker runs one
// of its inputs, so that the caller may change what they read.
func (c *ScriptCheck) abandon() {
	c.seal()
	c.Cancel()
	_ = c.Wait()
}

// wake rouses the workers waiting for tasks. A waiter counts itself before
// it reads avail and sealed, and those are stored before waiters is read
// here, so either it sees the new state or it is woken.
func (c *ScriptCheck) wake() {
	if c.waiters.Load() == 0 {
		return
	}
	c.mu.Lock()
	c.cond.Broadcast()
	c.mu.Unlock()
}

// published waits until task k is published (true) or the check is sealed
// without it (false).
func (c *ScriptCheck) published(k int64) bool {
	if k < c.avail.Load() {
		return true
	}
	c.mu.Lock()
	c.waiters.Add(1)
	for k >= c.avail.Load() && !c.sealed.Load() {
		c.cond.Wait()
	}
	c.waiters.Add(-1)
	c.mu.Unlock()
	return k < c.avail.Load()
}

func (c *ScriptCheck) closeDone() {
	if c.closed.CompareAndSwap(false, true) {
		close(c.done)
	}
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
	limit := int64(len(c.tasks))
	for n := 1; ; n++ {
		k := c.next.Add(1) - 1
		if k >= limit || !c.published(k) {
			return
		}
		if k < c.firstFail.Load() {
			c.run(k)
		}
		if n%yieldEvery == 0 {
			// A goroutine that never reschedules while it makes long
			// cgo calls (a verification takes about 30 µs) is seen by
			// sysmon as running 10 ms on one schedtick: it retakes the
			// P and polls every 20 µs again, waking about 6,000 times a
			// second and preempting the verifiers. Rescheduling keeps
			// the schedtick moving and sysmon asleep (bench/decisions.md).
			runtime.Gosched()
		}
		// The seal's store comes before its read of finished, this add
		// before this read of sealed: whichever is last closes done.
		if f := c.finished.Add(1); c.sealed.Load() && f == c.avail.Load() {
			c.closeDone()
		}
	}
}

func (c *ScriptCheck) run(k int64) {
	t := c.tasks[k]
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

// Done is closed once the check is sealed and every input has been
// verified or skipped.
func (c *ScriptCheck) Done() <-chan struct{} { return c.done }

// Cancel skips the inputs not yet started; Wait then reports
// ErrCheckCancelled unless an input had already failed.
func (c *ScriptCheck) Cancel() {
	for {
		cur := c.firstFail.Load()
		if cur != noFailure || c.firstFail.CompareAndSwap(cur, -1) {
			return
		}
	}
}

// Wait verifies the inputs no worker has claimed yet, waits for the rest
// and returns the first failing input's error in block order (a
// *RuleError with Core's reason), or nil. The check must be sealed.
func (c *ScriptCheck) Wait() error {
	c.work()
	<-c.done
	k := c.firstFail.Load()
	if k < 0 {
		return ErrCheckCancelled
	}
	if k == noFailure {
		return nil
	}
	t := c.tasks[k]
	tx := c.txs[t.job]
	return &RuleError{Reason: script.RejectReason(c.errs[k]), Detail: "tx " + tx.TxID.String() + " input " + strconv.Itoa(int(t.input)) + ": " + c.errs[k].Error()}
}
