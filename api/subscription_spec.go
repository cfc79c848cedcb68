package api

import "utxod/events"

// Spec is the subscription the request names, for events.Compile: what
// POST /v1/subscriptions keeps and what a hook of `utxod serve --webhooks`
// watches. Its error is a malformed scan object.
func (r SubscriptionRequest) Spec() (events.Spec, error) {
	objs, err := parseScanObjects(r.Descriptors)
	if err != nil {
		return events.Spec{}, err
	}
	return events.Spec{Addresses: r.Addresses, Scripthashes: r.Scripthashes, Descriptors: objs, Outpoints: r.Outpoints, Blocks: r.Blocks, Tweaks: r.Tweaks}, nil
}
