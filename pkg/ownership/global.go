package ownership

import (
	"fmt"
	"maps"
	"slices"
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

// ArgCreated lists, in the broker-level record, the entries mqctl
// created ("kind:name", sorted): a record written by an mqctl before it
// has none, and its entries may be users that were on the broker before
// mqctl, which that mqctl recorded when a file named them (an export
// applied): Record.Created. A vhost's record lists so the objects of SPEC
// §9 it created (vhost limits, shovels, federation upstreams and sets,
// permissions, topic permissions), which an mqctl before it recorded
// alike when a file named them as the broker held them.
const ArgCreated = "x-mqctl-created"

// ArgKept lists, in a record (of a vhost, or of the broker's users), the
// objects of SPEC §9 the owner's file names that were on the broker before
// mqctl ("kind:name", sorted): kept as the file says, never mqctl's
// (Record.Kept). An mqctl before it wrote none, and reads past it.
const ArgKept = "x-mqctl-kept"

// CreatedList is the value of ArgCreated in the record of vhost: the
// objects of created in vhost that refs lists (nil for none).
func CreatedList(vhost string, refs map[plan.ObjectRef]plan.Print, created map[plan.ObjectRef]bool) []any {
	list := refList(vhost, created, func(ref plan.ObjectRef) bool { _, ok := refs[ref]; return ok })
	if len(list) == 0 {
		return nil
	}
	return list
}

// KeptList is the value of ArgKept listing the objects of kept in vhost
// ("" the broker's own objects) that refs does not list (nil for none).
func KeptList(vhost string, refs map[plan.ObjectRef]plan.Print, kept map[plan.ObjectRef]bool) []any {
	list := refList(vhost, kept, func(ref plan.ObjectRef) bool { _, ok := refs[ref]; return !ok })
	if len(list) == 0 {
		return nil
	}
	return list
}

// GlobalValue is the value of the broker-level record listing refs (only
// those of the broker's own objects, Vhost "", are kept), of which mqctl
// created those of created, and kept (Record.Kept, only the broker's own
// objects that refs does not list).
func GlobalValue(refs map[plan.ObjectRef]plan.Print, created, kept map[plan.ObjectRef]bool) map[string]any {
	v := map[string]any(Exchange("", 0, refs).Arguments)
	v[ArgCreated] = refList("", created, func(ref plan.ObjectRef) bool { _, ok := refs[ref]; return ok })
	if k := KeptList("", refs, kept); k != nil {
		v[ArgKept] = k
	}
	return v
}

// refList is the sorted "kind:name" list of the objects of set in vhost
// ("" the broker's own) for which keep is true.
func refList(vhost string, set map[plan.ObjectRef]bool, keep func(plan.ObjectRef) bool) []any {
	list := []any{}
	for _, ref := range slices.SortedFunc(maps.Keys(set), func(a, b plan.ObjectRef) int {
		return strings.Compare(string(a.Kind)+":"+a.Name, string(b.Kind)+":"+b.Name)
	}) {
		if set[ref] && ref.Vhost == vhost && keep(ref) {
			list = append(list, string(ref.Kind)+":"+ref.Name)
		}
	}
	return list
}

// readRefs reads a "kind:name" list of the objects of vhost ("" the
// broker's own).
func readRefs(vhost string, value any) map[plan.ObjectRef]bool {
	out := map[plan.ObjectRef]bool{}
	list, _ := value.([]any)
	for _, item := range list {
		s, _ := item.(string)
		if k, name, ok := strings.Cut(s, ":"); ok {
			out[plan.ObjectRef{Kind: plan.Kind(k), Vhost: vhost, Name: name}] = true
		}
	}
	return out
}

// DecodeGlobal reads the broker-level record from the parameter's value
// (nil when there is none).
func DecodeGlobal(value map[string]any, owner string) (*Record, error) {
	rec := &Record{Vhost: "", Owner: owner, Managed: map[plan.ObjectRef]plan.Print{}, Created: map[plan.ObjectRef]bool{}, Kept: map[plan.ObjectRef]bool{}}
	if value == nil {
		return rec, nil
	}
	rec.Created, rec.Kept = readRefs("", value[ArgCreated]), readRefs("", value[ArgKept])
	args := maps.Clone(value)
	delete(args, ArgKept)
	e := &topology.Exchange{Name: GlobalParameter, Arguments: topology.Args(args).Normalized()}
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
