package broker

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/mqctl/mqctl/internal/parallel"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Inspect reads everything a plan needs of the vhosts of scope (sorted;
// none: only the broker's own objects), in one place: their topology, the
// objects of every kind carried as items (the registry's item kinds,
// through their drivers) and the broker's own objects (users and their
// access), beside each other; then it computes the state's fingerprints
// once. A kind the broker would not let the user read is in Live.Unread:
// unknown, not empty. Unlike ReadTopology, an empty scope reads no vhost.
func (c *Client) Inspect(ctx context.Context, scope []string) (*Live, error) {
	live, err := c.InspectState(ctx, scope)
	if err != nil {
		return nil, err
	}
	live.Fingerprint, live.VhostsFingerprint = Fingerprints(live.State, live.Vhosts)
	return live, nil
}

// InspectState is Inspect without the fingerprints, for a caller that
// computes them (Fingerprints) beside its own work.
func (c *Client) InspectState(ctx context.Context, scope []string) (*Live, error) {
	items := c.startItems(ctx, scope)
	var (
		live *Live
		err  error
	)
	if len(scope) == 0 {
		live = c.newLive("")
		live.State = topology.New()
	} else if _, live, err = c.readState(ctx, scope, false); err != nil {
		items()
		return nil, err
	}
	if err := items().into(live); err != nil {
		return nil, err
	}
	return live, nil
}

// newLive is a read of source with nothing in it yet (what a read of no
// vhost finds).
func (c *Client) newLive(source string) *Live {
	return &Live{
		Server:         c.Server(),
		Version:        c.version,
		Source:         source,
		Vhosts:         map[string]VhostInfo{},
		Queues:         map[string]map[string]QueueStats{},
		Owned:          map[string]map[string]string{},
		PropertiesKeys: map[string]map[string]string{},
		Unread:         map[string][]Unread{},
	}
}

// itemJob is one read of one item kind in one vhost ("" for the broker's
// own kinds).
type itemJob struct {
	vhost string
	spec  kind.Spec
	items []*topology.Item
	err   error
}

type itemJobs []*itemJob

// startItems starts reading the item kinds' objects of vhosts (and the
// broker's own), a few requests at a time, beside whatever the caller
// reads meanwhile; the function it returns waits for them.
func (c *Client) startItems(ctx context.Context, vhosts []string) func() itemJobs {
	var jobs itemJobs
	for _, s := range kind.Access() {
		if s.Broker {
			jobs = append(jobs, &itemJob{spec: s})
		}
	}
	for _, vh := range vhosts {
		for _, s := range kind.Items() {
			if !s.Broker {
				jobs = append(jobs, &itemJob{vhost: vh, spec: s})
			}
		}
	}
	g := parallel.New(4)
	for _, j := range jobs {
		g.Go(func() { j.items, j.err = c.ReadItems(ctx, j.spec.Kind, j.vhost) })
	}
	return func() itemJobs { g.Wait(); return jobs }
}

// into puts what the jobs read into live.State (the vhosts it holds; a
// vhost it lacks does not exist), and a kind the broker would not let the
// user read into live.Unread: unknown, not empty.
func (jobs itemJobs) into(live *Live) error {
	state := live.State
	var errs []error
	for _, j := range jobs {
		k := j.spec.Kind
		if j.vhost != "" && state.Vhosts[j.vhost] == nil {
			continue // no such vhost (a plan creates it): nothing was there
		}
		switch {
		case errors.Is(j.err, ErrForbidden):
			live.Unread[j.vhost] = append(live.Unread[j.vhost], Unread{Vhost: j.vhost, Kind: k, Reason: j.err.Error()})
		case errors.Is(j.err, ErrVhostNotFound):
			// Deleted since it was read: its items went with it.
		case j.err != nil:
			errs = append(errs, j.err)
		default:
			items := &state.Items
			if j.vhost != "" {
				items = &state.Vhosts[j.vhost].Items
			}
			state.Declare(k) // read: what is not there is not there
			for _, it := range j.items {
				it.Secret = topology.SecretKeys(k, it.Settings)
				items.Put(it)
			}
		}
	}
	return errors.Join(errs...)
}

// VhostsPrefix starts a fingerprint without the kinds about users
// (Live.VhostsFingerprint).
const VhostsPrefix = "sha256-vhosts:"

// Fingerprints hash the normalised state read (the topology with its item
// kinds, the vhosts' tags; not message counts): equal fingerprints mean
// nothing a plan depends on changed. all covers everything; vhosts leaves
// out the kinds about users and their access (another team's new user
// must not make a plan that manages none stale), and says so by its
// prefix. The topology part is hashed once for both. It sorts the
// bindings of t's vhosts, and reads t otherwise.
func Fingerprints(t *topology.Topology, vhosts map[string]VhostInfo) (all, vhostsOnly string) {
	base := topologyPrint(t, vhosts)
	return itemsPrint(base, t, true), itemsPrint(base, t, false)
}

// topologyPrint hashes the vhosts' metadata and the objects of their own
// kinds, one object at a time in name order: each vhost's metadata as
// JSON, then every field of each exchange, queue, binding and policy that
// the model carries (their JSON fields; TestFingerprintCoversEveryField
// fails for one left out), each string with its length first and each
// argument table in its canonical form. Written by hand: encoding/json's
// reflection took three quarters of the print's time (9 ms of a 10,002-
// object plan, 70 ms of a 50,002-object one).
func topologyPrint(t *topology.Topology, vhosts map[string]VhostInfo) string {
	h := sha256.New()
	w := &printWriter{w: bufio.NewWriterSize(h, 16<<10)}
	printVhostObjects(t, vhosts, w, json.NewEncoder(w.w), nil)
	w.w.Flush()
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// printVhostObjects writes the print of each vhost of t (its metadata, to
// enc, which writes to w) and of each of its exchanges, queues, bindings
// and policies, in the print's order, and calls done, when set, after
// each object with the object it was (ObjectSums: its own sum). It sorts
// the vhosts' bindings.
func printVhostObjects(t *topology.Topology, vhosts map[string]VhostInfo, w *printWriter, enc *json.Encoder, done func(ObjectSum)) {
	if done == nil {
		done = func(ObjectSum) {}
	}
	for _, name := range t.VhostNames() {
		v := t.Vhosts[name]
		v.SortBindings()
		_ = enc.Encode(vhostMeta(v, vhosts[name])) // strings and a flag: nothing to fail on
		done(ObjectSum{Kind: kind.Vhost, Vhost: name, Name: name})
		for _, n := range v.ExchangeNames() {
			w.exchange(v.Exchanges[n])
			done(ObjectSum{Kind: kind.Exchange, Vhost: name, Name: n})
		}
		for _, n := range v.QueueNames() {
			w.queue(v.Queues[n])
			done(ObjectSum{Kind: kind.Queue, Vhost: name, Name: n})
		}
		for _, b := range v.Bindings {
			w.binding(b)
			done(ObjectSum{Kind: kind.Binding, Vhost: name, Binding: b})
		}
		for _, k := range kind.PolicyKinds() {
			for _, n := range v.PolicyNamesOf(k) {
				w.policy(k, v.PoliciesOf(k)[n])
				done(ObjectSum{Kind: k, Vhost: name, Name: n})
			}
		}
	}
}

// vhostMeta is what a vhost's print holds of its metadata, encoded as
// JSON.
func vhostMeta(v *topology.Vhost, info VhostInfo) any {
	tags := slices.Clone(info.Tags)
	sort.Strings(tags)
	return struct {
		Name             string   `json:"vhost"`
		Description      string   `json:"description"`
		DefaultQueueType string   `json:"default_queue_type"`
		Tags             []string `json:"tags"`
		Protected        bool     `json:"protected,omitempty"`
	}{v.Name, v.Description, v.DefaultQueueType, tags, info.Protected}
}

// printWriter writes the objects of a topology's print (topologyPrint):
// each object's kind, then its fields in their order, unambiguously.
type printWriter struct{ w *bufio.Writer }

func (p *printWriter) Write(b []byte) (int, error)       { return p.w.Write(b) }
func (p *printWriter) WriteByte(c byte) error            { return p.w.WriteByte(c) }
func (p *printWriter) WriteString(s string) (int, error) { return p.w.WriteString(s) }

// WriteQuoted writes s as its length and its bytes (topology.Args'
// canonical form asks a hash for its strings this way).
func (p *printWriter) WriteQuoted(s string) {
	if p.w.Available() < binary.MaxVarintLen64 {
		p.w.Flush()
	}
	p.w.Write(binary.AppendUvarint(p.w.AvailableBuffer(), uint64(len(s))))
	p.w.WriteString(s)
}

func (p *printWriter) flag(b bool) {
	if b {
		p.w.WriteByte(1)
		return
	}
	p.w.WriteByte(0)
}

// args writes a table in its canonical form, ended (an empty one writes
// nothing but its end).
func (p *printWriter) args(a topology.Args) {
	a.WriteCanonical(p)
	p.w.WriteByte(0xff)
}

// object writes one object: its kind, its strings, its flags and its
// argument table.
func (p *printWriter) object(kind string, strs []string, flags []bool, args topology.Args) {
	p.WriteQuoted(kind)
	for _, s := range strs {
		p.WriteQuoted(s)
	}
	for _, f := range flags {
		p.flag(f)
	}
	p.args(args)
}

func (p *printWriter) exchange(e *topology.Exchange) {
	p.object("exchange", []string{e.Name, e.Type}, []bool{e.Durable, e.AutoDelete, e.Internal}, e.Arguments)
}

func (p *printWriter) queue(q *topology.Queue) {
	p.object("queue", []string{q.Name, q.Type}, []bool{q.Durable, q.AutoDelete}, q.Arguments)
}

func (p *printWriter) binding(b *topology.Binding) {
	p.object("binding", []string{b.Source, b.Destination, b.DestinationType, b.RoutingKey}, nil, b.Arguments)
}

func (p *printWriter) policy(k kind.Kind, pol *topology.Policy) {
	p.object(k.Label(), []string{pol.Name, pol.Pattern, pol.ApplyTo, strconv.Itoa(pol.Priority)}, nil, pol.Definition)
}

// itemsPrint adds the item kinds' objects to the print of the rest of the
// state, so that a saved plan goes stale when they change; without access,
// the kinds about users and their access are left out.
func itemsPrint(base string, state *topology.Topology, access bool) string {
	h := sha256.New()
	io.WriteString(h, base)
	printItems(state, access, json.NewEncoder(h), nil)
	if !access {
		return VhostsPrefix + hex.EncodeToString(h.Sum(nil))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// printItems writes the settings of state's items to enc, in the print's
// order: with access, the broker's users and their access first, then
// each vhost's items of every kind; without, each vhost's items of the
// kinds that are not about users (kind.VhostItems). It calls done, when
// set, after each item with the item it was (Access: of a kind a print
// without access leaves out).
func printItems(state *topology.Topology, access bool, enc *json.Encoder, done func(ObjectSum)) {
	if done == nil {
		done = func(ObjectSum) {}
	}
	if access {
		for _, s := range kind.Access() {
			k := s.Kind
			for _, n := range state.Items.Names(k) {
				_ = enc.Encode(state.Items.Get(k, n).Settings)
				done(ObjectSum{Kind: k, Name: n, Access: true})
			}
		}
	}
	specs := kind.VhostItems()
	if access {
		specs = kind.Items()
	}
	vhostOnly := map[kind.Kind]bool{}
	for _, s := range kind.VhostItems() {
		vhostOnly[s.Kind] = true
	}
	for _, vh := range state.VhostNames() {
		v := state.Vhosts[vh]
		for _, s := range specs {
			k := s.Kind
			for _, n := range v.Items.Names(k) {
				// The settings themselves, secrets included: a changed
				// password must change the fingerprint. Only their hash
				// leaves the process.
				_ = enc.Encode(v.Items.Get(k, n).Settings) // normalised Args: always encodable
				done(ObjectSum{Kind: k, Vhost: vh, Name: n, Access: !vhostOnly[k]})
			}
		}
	}
}
