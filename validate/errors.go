package validate

import (
	"errors"
	"fmt"
)

// RuleError is a consensus failure. Reason is Bitcoin Core's short reject
// reason string (e.g. "bad-txnmrklroot"); Detail says what failed.
type RuleError struct {
	Reason string
	Detail string
}

func (e *RuleError) Error() string {
	if e.Detail == "" {
		return e.Reason
	}
	return e.Reason + ": " + e.Detail
}

// ruleErr builds a *RuleError with a formatted detail.
func ruleErr(reason, format string, args ...any) *RuleError {
	return &RuleError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Reason returns the Core reject reason carried by err, or "" when err is
// not a consensus failure.
func Reason(err error) string {
	var re *RuleError
	if errors.As(err, &re) {
		return re.Reason
	}
	return ""
}
