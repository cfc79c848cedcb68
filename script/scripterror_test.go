package script

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestErrorCodeTable checks the one table of ScriptError codes: every code
// has a name and a text, names are unique, and texts are unique except the
// one Core shares (ScriptErrorString's default "unknown error", which
// SCRIPTNUM gives until its own text is confirmed).
func TestErrorCodeTable(t *testing.T) {
	names := map[string]ErrorCode{}
	texts := map[string]ErrorCode{}
	for c := range numErrorCodes {
		name, text := c.Name(), c.Text()
		if name == "" || text == "" {
			t.Errorf("code %d: name %q text %q", c, name, text)
		}
		if name != strings.ToUpper(name) || strings.ContainsAny(name, " ") || strings.HasPrefix(name, "SCRIPT_ERR_") {
			t.Errorf("code %d: name %q is not a script_tests.json name", c, name)
		}
		if prev, ok := names[name]; ok {
			t.Errorf("name %q: codes %d and %d", name, prev, c)
		}
		names[name] = c
		if prev, ok := texts[text]; ok && !(prev == ErrUnknown && c == ErrScriptNum) {
			t.Errorf("text %q: codes %d and %d", text, prev, c)
		}
		texts[text] = c
		if got, ok := ErrorCodeByName(name); !ok || got != c {
			t.Errorf("ErrorCodeByName(%q) = %d, %v; want %d", name, got, ok, c)
		}
		if c.String() != name || c.Error() != text {
			t.Errorf("code %d: String %q Error %q", c, c.String(), c.Error())
		}
	}
	if _, ok := ErrorCodeByName("NO_SUCH_ERROR"); ok {
		t.Error("ErrorCodeByName accepted an unknown name")
	}
	// Values outside the table read as UNKNOWN_ERROR, as Core's default.
	if c := numErrorCodes; c.Name() != "UNKNOWN_ERROR" || c.Text() != "unknown error" {
		t.Errorf("out of range: %q %q", c.Name(), c.Text())
	}
	// Spot checks against Core's script_error.cpp.
	for _, tc := range []struct {
		c          ErrorCode
		name, text string
	}{
		{ErrOK, "OK", "No error"},
		{ErrEvalFalse, "EVAL_FALSE", "Script evaluated without error but finished with a false/empty top stack element"},
		{ErrNullFail, "NULLFAIL", "Signature must be zero for failed CHECK(MULTI)SIG operation"},
		{ErrSigFindAndDelete, "SIG_FINDANDDELETE", "Signature is found in scriptCode"},
	} {
		if tc.c.Name() != tc.name || tc.c.Text() != tc.text {
			t.Errorf("code %d: %q %q", tc.c, tc.c.Name(), tc.c.Text())
		}
	}
}

// TestErrorIs matches an *Error by its code with errors.Is and errors.As,
// also through wrapping.
func TestErrorIs(t *testing.T) {
	err := fmt.Errorf("block: %w", newError(ErrCleanStack, 3, nil))
	if !errors.Is(err, ErrCleanStack) || errors.Is(err, ErrEvalFalse) {
		t.Errorf("errors.Is on %v", err)
	}
	var se *Error
	if !errors.As(err, &se) || se.Code != ErrCleanStack || se.Input != 3 {
		t.Errorf("errors.As on %v", err)
	}
	if got := RejectReason(err); got != "block-script-verify-flag-failed (Stack size must be exactly one after execution)" {
		t.Errorf("RejectReason %q", got)
	}
	inner := errors.New("inner")
	if err := newError(ErrUnknown, 0, inner); !errors.Is(err, inner) || !errors.Is(err, ErrUnknown) {
		t.Errorf("wrapped engine error lost: %v", err)
	}
}
