package kvstore

import "utxod/utxo"

// addRun inserts the outputs of one txid (a run of list entries). A new
// transaction's outputs, the usual case, are encoded into one record at
// once: inserting them one by one re-parses and copies the growing record
// per output, quadratic in the outputs of a wide transaction. Anything
// else goes through addOne, which also gives the errors for bad input.
func (c *coinCache) addRun(run []utxo.Entry) error {
	if len(run) < 2 {
		return c.addOne(run)
	}
	h := run[0].Hash
	e, err := c.load(h)
	if err != nil {
		return err
	}
	if e.len() != 0 {
		return c.addOne(run)
	}
	outs := c.outs[:0]
	for i, x := range run {
		if i > 0 && x.Index <= run[i-1].Index {
			return c.addOne(run)
		}
		outs = append(outs, utxo.IndexedCoin{Index: x.Index, Coin: x.Coin})
	}
	c.outs = outs[:0]
	rec, err := utxo.EncodeRecord(c.scratch[0][:0], outs)
	if err != nil {
		return c.addOne(run)
	}
	c.scratch[0] = rec.Bytes()
	if err := c.setRecord(h, e, rec); err != nil {
		return err
	}
	if rec.Len() > 0 { // the txid had no unspent output (e.len() == 0)
		c.txs++
	}
	return nil
}
