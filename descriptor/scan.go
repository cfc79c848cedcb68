package descriptor

import (
	"context"
	"fmt"

	"utxod/params"
)

// DefaultRangeEnd is the end of the range scantxoutset derives a ranged
// descriptor over when none is given: [0, 1000] (Core's
// EvalDescriptorStringOrObject).
const DefaultRangeEnd = 1000

// Range is an inclusive range of derivation indices, given either as its
// end (RPC "range": n, beginning at 0) or as a pair ("range": [b, e]).
type Range struct {
	Begin, End int64
	Pair       bool // given as [begin, end]
}

// CheckRange is Core's ParseRange and ParseDescriptorRange checks, in
// their order, with their messages.
func CheckRange(r Range) error {
	switch {
	case r.Pair && r.Begin > r.End:
		return &Error{Kind: ErrRange, Msg: "Range specified as [begin,end] must not have begin after end"}
	case r.Begin < 0:
		return &Error{Kind: ErrRange, Msg: "Range should be greater or equal than 0"}
	case r.End>>31 != 0:
		return &Error{Kind: ErrRange, Msg: "End of range is too high"}
	case r.End >= r.Begin+1_000_000:
		return &Error{Kind: ErrRange, Msg: "Range is too large"}
	}
	return nil
}

// ScanObject is one of scantxoutset's scan objects: a descriptor and,
// for a ranged one, the range (nil: [0, DefaultRangeEnd]).
type ScanObject struct {
	Desc  string
	Range *Range
}

// Needle is one output script a scan looks for, with the descriptor Core's
// scantxoutset reports in "desc" for outputs paying it.
type Needle struct {
	Script []byte
	Desc   string
}

// Expand evaluates scan objects as Core's scantxoutset does: each object
// is parsed and expanded over its range into one shared Provider, and every
// script is described by Infer against that provider as it stands after its
// object; a script already seen keeps its first description. maxScripts
// (> 0) bounds the scripts derived in total; ctx cancels a long derivation.
func Expand(ctx context.Context, objs []ScanObject, p *params.Params, maxScripts int) ([]Needle, error) {
	prov := NewProvider()
	seen := make(map[string]int)
	var out []Needle
	total := 0
	for i, obj := range objs {
		r := Range{Begin: 0, End: DefaultRangeEnd}
		if obj.Range != nil {
			if err := CheckRange(*obj.Range); err != nil {
				return nil, err
			}
			r = *obj.Range
		}
		descs, err := Parse(obj.Desc, p)
		if err != nil {
			return nil, err
		}
		if !descs[0].IsRange() {
			r = Range{}
		}
		var scripts [][]byte
		for pos := r.Begin; pos <= r.End; pos++ {
			if pos%256 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			for _, d := range descs {
				s, err := d.Expand(uint32(pos), prov)
				if err != nil {
					return nil, err
				}
				total += len(s)
				// Each position gives as many scripts as the first: refuse
				// an over-budget range before deriving it.
				projected := total + len(s)*int(r.End-pos)
				if total > maxScripts || pos == r.Begin && projected > maxScripts {
					return nil, &Error{Kind: ErrTooManyScripts, Msg: fmt.Sprintf("scan object %d: the scan objects expand to more than %d scripts", i, maxScripts)}
				}
				scripts = append(scripts, s...)
			}
		}
		for _, s := range scripts {
			if _, dup := seen[string(s)]; dup {
				continue
			}
			seen[string(s)] = len(out)
			out = append(out, Needle{Script: s, Desc: Infer(s, prov, p)})
		}
	}
	return out, nil
}
