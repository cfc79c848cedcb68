package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"utxod/api"
	"utxod/events"
	"utxod/params"
)

// webhookFlags configure the webhooks of "utxod serve" (docs/webhooks.md).
type webhookFlags struct {
	urls       urlList // --webhook, repeatable: a hook of every block
	file       string  // --webhooks: hooks with subscriptions
	secretFile string

	// Set by check.
	hooks  []events.Hook
	secret []byte
	// running is set by start.
	running *events.Webhooks
}

// minWebhookSecret is the shortest secret accepted, in bytes.
const minWebhookSecret = 16

// urlList is a repeatable string flag.
type urlList []string

func (l *urlList) String() string { return strings.Join(*l, ",") }
func (l *urlList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// webhooksFile is the JSON of --webhooks.
type webhooksFile struct {
	Hooks []struct {
		URL string `json:"url"`
		// Subscription is POST /v1/subscriptions' body; none: every
		// block's block_connected and block_disconnected.
		Subscription *api.SubscriptionRequest `json:"subscription"`
	} `json:"hooks"`
}

func (f *webhookFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.urls, "webhook", "POST every block's block_connected and block_disconnected to this `URL`, signed with --webhook-secret-file (repeatable; needs --datadir, where each hook's cursor is kept; docs/webhooks.md)")
	fs.StringVar(&f.file, "webhooks", "", `JSON file of webhooks with subscriptions: {"hooks": [{"url": "https://...", "subscription": {the body of POST /v1/subscriptions}}]}; a hook without a subscription gets every block (needs --datadir and --webhook-secret-file)`)
	fs.StringVar(&f.secretFile, "webhook-secret-file", "", "file holding the webhooks' HMAC-SHA256 secret (at least 16 bytes; surrounding whitespace ignored; not readable by others)")
}

// check reads the hooks and the secret before anything is opened (a usage
// error, exit 2).
func (f *webhookFlags) check(ctx context.Context, p *params.Params, datadir string) error {
	if len(f.urls) == 0 && f.file == "" {
		if f.secretFile != "" {
			return errors.New("--webhook-secret-file without --webhook or --webhooks")
		}
		return nil
	}
	if datadir == "" {
		return errors.New("--webhook and --webhooks need --datadir: each hook's cursor is kept in DATADIR/webhooks")
	}
	seen := make(map[string]bool)
	add := func(h events.Hook, from string) error {
		if err := events.CheckWebhookURL(h.URL); err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
		if seen[h.URL] {
			return fmt.Errorf("%s: webhook URL %q given twice (a hook's cursor is kept by its URL)", from, h.URL)
		}
		seen[h.URL] = true
		f.hooks = append(f.hooks, h)
		return nil
	}
	for _, u := range f.urls {
		if err := add(events.Hook{URL: u}, "--webhook"); err != nil {
			return err
		}
	}
	if f.file != "" {
		raw, err := os.ReadFile(f.file)
		if err != nil {
			return fmt.Errorf("--webhooks: %w", err)
		}
		var wf webhooksFile
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&wf); err != nil {
			return fmt.Errorf("--webhooks %s: %w", f.file, err)
		}
		if dec.More() {
			return fmt.Errorf("--webhooks %s: more than one JSON value", f.file)
		}
		if len(wf.Hooks) == 0 {
			return fmt.Errorf(`--webhooks %s: no hooks: {"hooks": [{"url": "https://...", "subscription": {...}}]}`, f.file)
		}
		for i, h := range wf.Hooks {
			from := fmt.Sprintf("--webhooks %s: hook %d", f.file, i)
			hook := events.Hook{URL: h.URL}
			if h.Subscription != nil {
				spec, err := h.Subscription.Spec()
				if err == nil {
					hook.Filter, err = events.Compile(ctx, spec, p, events.Limits{})
				}
				if err != nil {
					return fmt.Errorf("%s (%s): subscription: %w", from, h.URL, err)
				}
			}
			if err := add(hook, from); err != nil {
				return err
			}
		}
	}
	if f.secretFile == "" {
		return errors.New("webhooks need --webhook-secret-file FILE: the HMAC-SHA256 secret that signs their requests (never on the command line)")
	}
	secret, err := readSecretFile(f.secretFile)
	if err != nil {
		return fmt.Errorf("--webhook-secret-file: %w", err)
	}
	f.secret = secret
	return nil
}

// readSecretFile reads a secret from a regular file no other user may
// read or write, surrounding whitespace trimmed.
func readSecretFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o007 != 0 {
		return nil, fmt.Errorf("%s is open to other users (mode %04o): chmod 600 it", path, perm)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	secret := bytes.TrimSpace(raw)
	if len(secret) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	if len(secret) < minWebhookSecret {
		return nil, fmt.Errorf("%s holds %d bytes; at least %d (e.g. openssl rand -hex 32)", path, len(secret), minWebhookSecret)
	}
	return secret, nil
}

// start runs the hooks on hub (none: nothing).
func (f *webhookFlags) start(hub *events.Hub, datadir string, log *slog.Logger) error {
	if len(f.hooks) == 0 {
		return nil
	}
	w, err := events.StartWebhooks(events.WebhookConfig{Hub: hub, Dir: filepath.Join(datadir, "webhooks"), Secret: f.secret, Hooks: f.hooks, Log: log})
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	f.running = w
	return nil
}

// stop ends the hooks' deliveries and saves their cursors.
func (f *webhookFlags) stop() { f.running.Close() }
