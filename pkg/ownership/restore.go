package ownership

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// A replace deletes an exchange or a queue, and with it every binding on
// it, then declares it again and puts those bindings back. The bindings
// the file declares, the next plan makes again from the file; those it
// does not (another team's queue bound to a replaced exchange) only the
// plan that took them down knows. So before the first delete of a replace,
// apply writes them down on the broker, in the vhost, as an internal
// exchange "mqctl.restore.<sequence>" (the restore list), and deletes it
// once they are back: an apply killed between a replace's halves (kill -9,
// a host lost) leaves the list, and the next apply puts them back.

// RestorePrefix starts the name of every restore list exchange.
const RestorePrefix = "mqctl.restore."

// ArgRestore is the argument of a restore list exchange that holds its
// bindings: JSON text (a list of bindings, as the management API writes
// them), as a list of strings of at most ChunkSize characters to be
// concatenated.
const ArgRestore = "x-mqctl-restore"

// IsRestore reports whether an exchange name belongs to a restore list.
func IsRestore(name string) bool {
	if !strings.HasPrefix(name, RestorePrefix) {
		return false
	}
	_, err := strconv.ParseInt(name[len(RestorePrefix):], 10, 64)
	return err == nil
}

// RestoreExchange builds the restore list exchange of sequence seq holding
// bindings.
func RestoreExchange(seq int64, bindings []*topology.Binding) *topology.Exchange {
	text, _ := json.Marshal(bindings) // bindings marshal without fail
	return &topology.Exchange{
		Name:      RestorePrefix + strconv.FormatInt(seq, 10),
		Type:      "fanout",
		Durable:   true,
		Internal:  true,
		Arguments: topology.Args{ArgRestore: chunks(string(text))},
	}
}

// RestoreBindings reads the bindings of restore list exchange e of vhost
// (IsRestore(e.Name)).
func RestoreBindings(vhost string, e *topology.Exchange) ([]*topology.Binding, error) {
	v := e.Arguments[ArgRestore]
	if v == nil {
		return nil, restoreUnreadable(vhost, e, ArgRestore+" is not a list of strings")
	}
	text, err := joinChunks(ArgRestore, v)
	if err != nil {
		return nil, restoreUnreadable(vhost, e, err.Error())
	}
	var out []*topology.Binding
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, restoreUnreadable(vhost, e, err.Error())
	}
	for _, b := range out {
		if b == nil || b.Source == "" && b.Destination == "" {
			return nil, restoreUnreadable(vhost, e, "a binding without ends")
		}
	}
	return out, nil
}

func restoreUnreadable(vhost string, e *topology.Exchange, why string) error {
	return fmt.Errorf("restore list %q in vhost %q is unreadable (%s): it lists the bindings an interrupted apply took down with a replace and did not put back; bind them again by hand if they are missing, then delete that exchange", e.Name, vhost, why)
}

// extractRestores removes the restore list exchanges of v from it and
// returns their names (sorted) and their bindings (each once).
func extractRestores(vhost string, v *topology.Vhost) (names []string, bindings []*topology.Binding, err error) {
	for _, en := range v.ExchangeNames() {
		if IsRestore(en) {
			names = append(names, en)
		}
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, en := range names {
		bs, err := RestoreBindings(vhost, v.Exchanges[en])
		if err != nil {
			return nil, nil, err
		}
		delete(v.Exchanges, en)
		for _, b := range bs {
			if k := b.Key(); !seen[k] {
				seen[k] = true
				bindings = append(bindings, b)
			}
		}
	}
	return names, bindings, nil
}
