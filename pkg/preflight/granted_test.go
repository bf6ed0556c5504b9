package preflight

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mqctl/mqctl/pkg/broker"
)

// TestGrantedRetriesAccessRefused: a 403 right after the throwaway
// vhost's grant is tried again; it stays the answer after five tries, and
// any other answer is taken at once.
func TestGrantedRetriesAccessRefused(t *testing.T) {
	forbidden := fmt.Errorf("declare exchange: %w", broker.ErrForbidden)
	rejected := fmt.Errorf("declare queue: %w", broker.ErrRejected)
	for _, tc := range []struct {
		name    string
		answers []error
		want    error
		calls   int
	}{
		{"granted after two refusals", []error{forbidden, forbidden, nil}, nil, 3},
		{"always refused", []error{forbidden, forbidden, forbidden, forbidden, forbidden, nil}, forbidden, 5},
		{"a refusal of the object is not tried again", []error{rejected, nil}, rejected, 1},
		{"taken at once", []error{nil}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := granted(context.Background(), func(context.Context) error {
				calls++
				return tc.answers[calls-1]
			})
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) || calls != tc.calls {
				t.Errorf("granted: %v after %d calls, want %v after %d", err, calls, tc.want, tc.calls)
			}
		})
	}
}
