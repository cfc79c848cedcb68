package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8335", false, true},
		{"localhost:8335", false, true},
		{"[::1]:8335", false, true},
		{"127.0.0.2:0", false, true},
		{"0.0.0.0:8335", false, false},
		{":8335", false, false},
		{"192.168.1.10:8335", false, false},
		{"example.com:8335", false, false},
		{"0.0.0.0:8335", true, true},
		{"nonsense", true, false},
	} {
		if err := checkListen(tc.addr, tc.remote); (err == nil) != tc.ok {
			t.Errorf("checkListen(%q, %v) = %v", tc.addr, tc.remote, err)
		}
	}
}

func TestWriteCookie(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, datadir, file, want string
	}{
		{"datadir", dir, "", filepath.Join(dir, ".cookie")},
		{"explicit file", "", filepath.Join(dir, "tok"), filepath.Join(dir, "tok")},
		{"temporary", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, path, remove, err := writeCookie(tc.datadir, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && path != tc.want {
				t.Fatalf("path %s, want %s", path, tc.want)
			}
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("stat %v %v", fi, err)
			}
			b, _ := os.ReadFile(path)
			if string(b) != tok || len(tok) != 64 {
				t.Fatalf("cookie %q token %q", b, tok)
			}
			remove()
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatal("cookie not removed")
			}
		})
	}
	a, _, ra, _ := writeCookie("", "")
	b, _, rb, _ := writeCookie("", "")
	ra()
	rb()
	if a == b {
		t.Fatal("tokens repeat")
	}
}

func TestServeHelpAndBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"serve", "--help"}, 0, "--allow-remote"},
		{[]string{"serve", "--listen", "0.0.0.0:0"}, 2, "not a loopback address"},
		{[]string{"serve", "--log-format", "xml"}, 2, "--log-format"},
		{[]string{"serve", "--network", "moon"}, 2, "moon"},
		{[]string{"serve", "extra"}, 2, "unexpected argument"},
		{[]string{"help"}, 0, "serve"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.out) {
			t.Errorf("%v: code %d\n%s%s", tc.args, code, stdout.String(), stderr.String())
		}
	}
	var stdout bytes.Buffer
	run([]string{"serve", "--help"}, &stdout, io.Discard)
	for _, flag := range []string{"-listen", "-cache-mb", "-datadir", "-backend", "-network", "-log-level", "-log-format", "-cookie-file", "-shutdown-timeout"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("help lacks %s", flag)
		}
	}
}

// TestServeInProcess runs serve with a cancellable context: it answers,
// guards writes with the cookie token, and on cancellation stops cleanly
// and removes the cookie.
func TestServeInProcess(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type started struct{ addr, cookie string }
	ready := make(chan started, 1)
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- serve(ctx, []string{"--listen", "127.0.0.1:0", "--datadir", filepath.Join(dir, "data"), "--log-level", "warn"},
			io.Discard, &stderr, func(addr, cookie string) { ready <- started{addr, cookie} })
	}()
	var st started
	select {
	case st = <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	base := "http://" + st.addr
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	// A write without the token is refused; with it, it goes through.
	resp, err = http.Post(base+"/v1/blocks", "application/octet-stream", strings.NewReader("x"))
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("unauthenticated POST: %v %v", resp, err)
	}
	resp.Body.Close()
	tok, err := os.ReadFile(st.cookie)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", base+"/v1/blocks", strings.NewReader("x"))
	req.Header.Set("Authorization", "Bearer "+string(tok))
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("authenticated garbage POST: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Stat(st.cookie); !os.IsNotExist(err) {
		t.Fatal("cookie left behind")
	}
}
