package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/plan"
)

// A plan not made to be saved (PlanOptions.Save) holds no fingerprint:
// applied as a saved plan it is refused before anything is read or
// changed, saying so, rather than found stale against any broker.
func TestApplyRefusesAPlanNotMadeToBeSaved(t *testing.T) {
	_, err := New(nil, Options{}).Apply(context.Background(), ApplyInput{Saved: &plan.Plan{Vhosts: []string{"v"}}}, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "PlanOptions.Save") {
		t.Fatalf("apply of a plan without a fingerprint: %v", err)
	}
}
