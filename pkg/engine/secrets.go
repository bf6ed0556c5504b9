package engine

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// resolveSecrets puts back into a saved plan's items the secrets it does
// not hold (topology.Item.Secret), from the environment variables the file
// took them from (Item.Refs), before anything changes. A secret without a
// variable is refused: plan.WriteSaved never writes one, so such a plan
// was edited or made by another mqctl.
func resolveSecrets(p *plan.Plan, lookup func(string) (string, bool)) error {
	var missing []string
	for i := range p.Changes {
		c := &p.Changes[i]
		it, ok := c.After.(plan.ItemObject)
		if !ok {
			continue
		}
		for _, key := range it.Secret {
			v, ok := it.Settings[key]
			if !ok {
				continue
			}
			name, hasRef := it.Refs[key]
			if list, isList := v.([]any); isList && !hasRef {
				// A list of URIs: each element may come from a variable.
				for i := range list {
					name, ok := it.Refs[topology.RefKey(key, i)]
					if !ok {
						continue
					}
					val, found := "", false
					if lookup != nil {
						val, found = lookup(name)
					}
					if !found {
						missing = append(missing, fmt.Sprintf("set %s: item %d of %s of %s %q in vhost %q comes from it", name, i+1, key, c.Kind, c.Name, c.Vhost))
						continue
					}
					it.SetSecretPart(topology.SecretPart{Key: key, Index: i}, val)
				}
				continue
			}
			if !hasRef {
				if topology.MaskSecret(v) != nil && fmt.Sprint(topology.MaskSecret(v)) == fmt.Sprint(v) {
					continue // held whole: nothing secret in it
				}
				missing = append(missing, fmt.Sprintf("%s of %s %q in vhost %q is not in the plan, nor named by a variable", key, c.Kind, c.Name, c.Vhost))
				continue
			}
			val, ok := "", false
			if lookup != nil {
				val, ok = lookup(name)
			}
			if !ok {
				missing = append(missing, fmt.Sprintf("set %s: %s of %s %q in vhost %q comes from it", name, key, c.Kind, c.Name, c.Vhost))
				continue
			}
			it.Settings[key] = val
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("nothing was changed: the saved plan holds no secrets, and %s", strings.Join(missing, "; "))
	}
	return nil
}
