package follow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"utxod/wire"
)

// ErrChainEnds: HeaderChain reached the end of the source's active chain
// (or left it) without meeting the block asked for.
var ErrChainEnds = errors.New("follow: the source's active chain does not reach the block")

// headerChainRetries is how often HeaderChain retries a page whose
// request failed with a retryable error (the source unavailable, a broken
// reply), waiting twice as long each time from headerChainBackoff.
var (
	headerChainRetries = 4
	headerChainBackoff = 500 * time.Millisecond
)

// HeaderChain fetches the headers of the source's active chain from
// genesis's child to the block to (included), MaxHeaders per request
// (/rest/headers, see Headers), walking forward from the genesis block by
// the last header of each page; each page must start at that header,
// chain and carry its proof of work (Headers' checks), so the pages chain
// too. fn receives each page's new headers in chain order (the slice is
// not reused). A source whose active chain ends, or no longer holds the
// last header received, before to gives ErrChainEnds; to equal to genesis
// gives no headers.
func (c *Client) HeaderChain(ctx context.Context, to wire.Hash, fn func([]Header) error) error {
	from := c.params.GenesisHash
	if to == from {
		return nil
	}
	height := int32(0) // from's
	for {
		var page []Header
		var err error
		wait := headerChainBackoff
		for try := 0; ; try++ {
			page, err = c.Headers(ctx, from, MaxHeaders)
			if err == nil || !retryable(err) || try == headerChainRetries || ctx.Err() != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			wait *= 2
		}
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return fmt.Errorf("%w: block %s at height %d left the source's active chain while the headers were fetched", ErrChainEnds, from, height)
		}
		news := page[1:]
		for i := range news {
			if news[i].Hash == to {
				return fn(news[:i+1])
			}
		}
		if len(news) > 0 {
			if err := fn(news); err != nil {
				return err
			}
		}
		if len(page) < MaxHeaders {
			return fmt.Errorf("%w: its tip is %s at height %d, and %s is not in the chain", ErrChainEnds, page[len(page)-1].Hash, height+int32(len(news)), to)
		}
		from = page[len(page)-1].Hash
		height += int32(len(news))
	}
}
