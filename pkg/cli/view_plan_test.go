package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	preflightpkg "github.com/mqctl/mqctl/pkg/preflight"
)

// TestPlanViewRefusedInternal: plan --preflight's error for objects the
// broker failed on with an internal error (HTTP 5xx) gives the advice for
// it (preflight.InternalAdvice), not "fix them in the file" alone; a
// refusal with a reason keeps that fix.
func TestPlanViewRefusedInternal(t *testing.T) {
	obj := []plan.ObjectAt{{ObjectRef: plan.ObjectRef{Kind: kind.Policy, Vhost: "v", Name: "p"}}}
	internal := &plan.Preflight{Refusals: []plan.Refusal{{Kind: kind.Policy, Objects: obj,
		Reason: "HTTP 500 (Internal Server Error), an internal error of the broker, not a refusal it gives a reason for"}}}
	err := planView{}.refused(internal)
	if !errors.Is(err, preflightpkg.ErrRefused) || !strings.Contains(err.Error(), "RabbitMQ's log has the reason") || strings.Contains(err.Error(), "fix them in the file before apply") {
		t.Errorf("an internal error: %v", err)
	}
	plain := &plan.Preflight{Refusals: []plan.Refusal{{Kind: kind.Policy, Objects: obj, Reason: "Validation failed"}}}
	if err := (planView{}).refused(plain); !strings.Contains(err.Error(), "fix them in the file before apply") || strings.Contains(err.Error(), "log") {
		t.Errorf("a refusal with a reason: %v", err)
	}
}
