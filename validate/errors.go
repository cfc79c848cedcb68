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
	// Mutated marks a block whose transactions do not match its header
	// (Core's BlockValidationResult::BLOCK_MUTATED): the failure says
	// nothing about the block the header names, so it must not be marked
	// invalid.
	Mutated bool
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

// mutatedErr builds a *RuleError for a mutated block.
func mutatedErr(reason, format string, args ...any) *RuleError {
	return &RuleError{Reason: reason, Detail: fmt.Sprintf(format, args...), Mutated: true}
}

// IsMutated reports whether err is a consensus failure of a mutated block.
func IsMutated(err error) bool {
	var re *RuleError
	return errors.As(err, &re) && re.Mutated
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
