package ownership

import (
	"fmt"
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
func DecodeGlobal(value map[string]any, owner string) (*Record, error) {
	rec := &Record{Vhost: "", Owner: owner, Managed: map[plan.ObjectRef]plan.Print{}}
	if value == nil {
		return rec, nil
	}
	e := &topology.Exchange{Name: GlobalParameter, Arguments: topology.Args(value).Normalized()}
	f, err := decode("", e, &rec.Managed, func(why string) error { return UnreadableGlobal(GlobalParameterOf(owner), owner, why) })
	if err != nil {
		return nil, err
	}
	rec.Format, rec.Exchanges = f, []string{GlobalParameter}
	return rec, nil
}

// UnreadableGlobal is the error of owner's record of the broker's users,
// the global parameter name, that cannot be read: it names whose it is,
// since only that owner's file (with its users section) can rebuild it.
func UnreadableGlobal(name, owner, why string) error {
	who := plan.OwnerName(owner)
	return fmt.Errorf("mqctl's ownership record %q of the broker's users, %s's, is unreadable (%s): delete that global parameter (rabbitmqctl clear_global_parameter %s), then apply %s's file, with its users section, again: that apply rebuilds the record from the file",
		name, who, why, name, who)
}
