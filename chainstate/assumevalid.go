package chainstate

import (
	"utxod/utxo"
	"utxod/validate"
)

// Assume-valid in the node. Whether a block's scripts are verified is
// decided when it connects, from the block index as it is then (Core's
// ConnectBlock; validate.AssumeValid.ScriptCheckReason): a block buried
// more than two weeks of work under the best header, on the way to the
// assumed block, connects with every rule but its input scripts checked.
// Such blocks are flagged StatusScriptsAssumed; the flag is persisted with
// the index, so Info can say up to which height scripts were assumed, also
// after a restart with other settings.

// assumeValid is the chainstate's assume-valid setting and bookkeeping.
type assumeValid struct {
	cfg validate.AssumeValid
	// top is the highest active-chain block connected without its
	// scripts (nil: none).
	top *validate.BlockNode
	// reason is the last script_check_reason logged ("" once skipping);
	// logged says whether any was.
	reason string
	logged bool
}

// skipScripts reports whether node's scripts are skipped, logging when the
// answer changes as Core does ("Enabling script verification at block #%d
// (%s): %s." / "Disabling script verification at block #%d (%s).").
func (cs *Chainstate) skipScripts(node *validate.BlockNode) bool {
	reason := cs.av.cfg.ScriptCheckReason(cs.index, node)
	if !cs.av.logged || reason != cs.av.reason {
		cs.av.logged, cs.av.reason = true, reason
		if reason == "" {
			cs.log.Info("disabling script verification (assume-valid)", "height", node.Height, "hash", node.Hash)
		} else {
			cs.log.Info("enabling script verification", "height", node.Height, "hash", node.Hash, "reason", reason)
		}
	}
	return reason == ""
}

// noteAssumed records that node, now the tip, connected without its scripts.
func (cs *Chainstate) noteAssumed(node *validate.BlockNode) {
	cs.addStatus(node, validate.StatusScriptsAssumed)
	if cs.av.top == nil || node.Height > cs.av.top.Height {
		cs.av.top = node
	}
}

// fixAssumedTop re-finds the highest assumed block after the tip moved
// back past it.
func (cs *Chainstate) fixAssumedTop() {
	if cs.av.top != nil && !cs.chain.Contains(cs.av.top) {
		cs.findAssumedTop()
	}
}

// loadAssumedTop is findAssumedTop at open: one pass over the index in
// its storage order, rather than a walk of the whole active chain from
// the tip, node by node, when no block was assumed.
func (cs *Chainstate) loadAssumedTop() {
	cs.av.top = nil
	cs.index.ForEach(func(n *validate.BlockNode) bool {
		if n.Status.Has(validate.StatusScriptsAssumed) && cs.chain.Contains(n) && (cs.av.top == nil || n.Height > cs.av.top.Height) {
			cs.av.top = n
		}
		return true
	})
}

// findAssumedTop walks the active chain down from the tip to the first
// block flagged StatusScriptsAssumed (at load: O(height) once).
func (cs *Chainstate) findAssumedTop() {
	cs.av.top = nil
	for n := cs.chain.Tip(); n != nil; n = n.Parent {
		if n.Status.Has(validate.StatusScriptsAssumed) {
			cs.av.top = n
			return
		}
	}
}

// addAssumeValid fills the assume-valid fields of info (cs.mu held).
func (cs *Chainstate) addAssumeValid(info *utxo.ChainstateInfo) {
	if cs.av.cfg.Enabled() {
		h := cs.av.cfg.Block
		info.AssumeValid = &h
	}
	if top := cs.av.top; top != nil {
		height := top.Height
		info.AssumedValidHeight = &height
	}
}
