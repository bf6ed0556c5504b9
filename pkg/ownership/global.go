package ownership

import (
	"strings"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The broker's own objects (users and their limits: kind.Spec.Broker) live
// in no vhost, so their record cannot be a vhost's exchange: it is the
// global runtime parameter GlobalParameter (PUT
// /api/global-parameters/mqctl-managed, administrators only), whose value
// holds the same arguments as a record exchange (format 3 now). One PUT
// replaces it whole, so it needs no generations. Its Record has Vhost "".

// GlobalParameter is the name of the broker-level record.
const GlobalParameter = "mqctl-managed"

// GlobalParameterOf is the name of owner's broker-level record:
// GlobalParameter for the owner "", "mqctl-managed.<owner>" otherwise.
func GlobalParameterOf(owner string) string {
	if owner == "" {
		return GlobalParameter
	}
	return GlobalParameter + "." + owner
}

// GlobalOwner reads the owner of a broker-level record from the global
// parameter's name.
func GlobalOwner(name string) (string, bool) {
	if name == GlobalParameter {
		return "", true
	}
	owner, ok := strings.CutPrefix(name, GlobalParameter+".")
	if !ok || owner == "" || topology.ValidOwner(owner) != nil {
		return "", false
	}
	return owner, true
}

// GlobalValue is the value of the broker-level record listing refs (only
// those of the broker's own objects, Vhost "", are kept).
func GlobalValue(refs map[plan.ObjectRef]plan.Print) map[string]any {
	return map[string]any(Exchange("", 0, refs).Arguments)
}

// DecodeGlobal reads the broker-level record from the parameter's value
// (nil when there is none).
func DecodeGlobal(value map[string]any) (*Record, error) {
	rec := &Record{Vhost: "", Managed: map[plan.ObjectRef]plan.Print{}}
	if value == nil {
		return rec, nil
	}
	e := &topology.Exchange{Name: GlobalParameter, Arguments: topology.Args(value).Normalized()}
	f, err := decode("", e, &rec.Managed)
	if err != nil {
		return nil, err
	}
	rec.Format, rec.Exchanges = f, []string{GlobalParameter}
	return rec, nil
}
