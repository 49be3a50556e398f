package runtime

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
)

type codedError struct{ code int }

func (e *codedError) Error() string { return "code " + strconv.Itoa(e.code) }

// The dead-letter headers name the error by its most specific type and give its chain, not
// "*fmt.wrapError".
func TestDeadLetterErrorName(t *testing.T) {
	_, numErr := strconv.Atoi("x")
	sentinel := errors.New("serde: wrong type")
	for _, c := range []struct {
		err         error
		name, chain string
	}{
		{fmt.Errorf("process: %w", numErr), "*strconv.NumError",
			"*fmt.wrapError: process: strconv.Atoi: parsing \"x\": invalid syntax\n*strconv.NumError: strconv.Atoi: parsing \"x\": invalid syntax\n" +
				"*errors.errorString: invalid syntax"},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", sentinel)), "error: serde: wrong type",
			"*fmt.wrapError: a: b: serde: wrong type\n*fmt.wrapError: b: serde: wrong type\n*errors.errorString: serde: wrong type"},
		{errors.Join(sentinel, &codedError{7}), "*runtime.codedError",
			"*errors.joinError: serde: wrong type\ncode 7\n*errors.errorString: serde: wrong type\n*runtime.codedError: code 7"},
	} {
		if got := ErrorName(c.err); got != c.name {
			t.Errorf("ErrorName(%v) = %q, want %q", c.err, got, c.name)
		}
		if got := ErrorChain(c.err); got != c.chain {
			t.Errorf("ErrorChain(%v) =\n%s\nwant\n%s", c.err, got, c.chain)
		}
	}
}
