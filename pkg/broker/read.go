package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/internal/parallel"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// How ReadState and ReadTopology read the vhosts (Live.Source).
const (
	// SourceLists: the per-kind list endpoints, which any management user
	// may read (readVhost).
	SourceLists = "lists"
	// SourceDefinitions: each vhost's definitions export, GET
	// /api/definitions/{vhost}, which needs the administrator tag, and its
	// exchange listing beside it (readVhostDefinitions). ReadTopology takes
	// it where the broker streams the export (readSource).
	SourceDefinitions = "definitions"
)

// Live is the state a read gives: topology.Live, the one type of the live
// state.
type Live = topology.Live

// Unread is a kind of object the broker would not let the user read in a
// vhost (topology.Unread; Live.Unread keys them by vhost).
type Unread = topology.Unread

// VhostInfo is a vhost's metadata (topology.VhostInfo).
type VhostInfo = topology.VhostInfo

// QueueStats is a queue's depth and consumer count (topology.QueueStats).
type QueueStats = topology.QueueStats

// ReadState reads the given vhosts (every vhost the user sees when vhosts
// is empty) into the topology model. A requested vhost that does not exist
// is absent from the result (a plan creates it). Built-in exchanges (""
// and amq.*), exclusive and server-named queues and the default
// exchange's implicit bindings are left out; `x-queue-type` is lifted into
// Queue.Type; argument values are normalised (integers are int64).
//
// Each vhost is read from its lists (queues with depth and consumers,
// exchanges, bindings, policies, operator policies; see readVhost), and one
// GET /api/vhosts gives the metadata.
func (c *Client) ReadState(ctx context.Context, vhosts []string) (*topology.Topology, *Live, error) {
	return c.readPrinted(ctx, vhosts, true)
}

// ReadTopology is ReadState without queue statistics, which make a queue
// listing several times slower: Live.Queues is empty (ask GetQueueStats,
// or ReadState, for the queues that matter). Where the broker streams its
// definitions export and the user may read it, the vhosts are read from
// their exports instead of the lists (see readSource); the topology and
// the fingerprint are the same either way, Live.Owned and
// Live.PropertiesKeys are not filled then.
func (c *Client) ReadTopology(ctx context.Context, vhosts []string) (*topology.Topology, *Live, error) {
	return c.readPrinted(ctx, vhosts, false)
}

// readPrinted is readState with the state's fingerprints (of the topology
// alone: these reads leave the item kinds to Inspect).
func (c *Client) readPrinted(ctx context.Context, vhosts []string, withStats bool) (*topology.Topology, *Live, error) {
	t, live, err := c.readState(ctx, vhosts, withStats)
	if err != nil {
		return nil, nil, err
	}
	live.Fingerprint, live.VhostsFingerprint = Fingerprints(t, live.Vhosts)
	return t, live, nil
}

func (c *Client) readState(ctx context.Context, vhosts []string, withStats bool) (*topology.Topology, *Live, error) {
	source := c.readSource(withStats)
	var ahead readsAhead
	if source == SourceDefinitions {
		ahead = c.readAhead(ctx, vhosts)
	}
	infos, err := c.listVhosts(ctx)
	if err != nil {
		ahead.drop()
		return nil, nil, err
	}
	var names []string
	if len(vhosts) == 0 {
		for n := range infos {
			names = append(names, n)
		}
	} else {
		for _, n := range vhosts {
			if _, ok := infos[n]; ok && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)

	var results []vhostResult
	if ahead != nil {
		results = ahead.finish(names, infos)
	} else {
		results = c.readVhosts(ctx, names, infos, source, withStats)
	}
	if source == SourceDefinitions && slices.ContainsFunc(results, func(r vhostResult) bool { return errors.Is(r.err, ErrForbidden) }) {
		// Refused (401 "Not administrator user": the tag was taken away
		// since the login, or a proxy refuses the export): never "absent".
		// Every vhost is read again from the lists, which any management
		// user may read and which say what the user may not, so that one
		// read is one source.
		source = SourceLists
		results = c.readVhosts(ctx, names, infos, source, withStats)
	}

	t := topology.New()
	live := c.newLive(source)
	live.State = t
	for i, name := range names {
		r := results[i]
		if errors.Is(r.err, ErrVhostNotFound) {
			continue // deleted since it was listed: absent, like a vhost that never was
		}
		if r.err != nil {
			return nil, nil, r.err
		}
		t.Vhosts[name] = r.vhost
		live.Vhosts[name] = infos[name]
		live.Queues[name] = r.stats
		if len(r.owned) > 0 {
			live.Owned[name] = r.owned
		}
		if r.keys != nil {
			live.PropertiesKeys[name] = r.keys
		}
		if len(r.unread) > 0 {
			live.Unread[name] = r.unread
		}
	}
	return t, live, nil
}

// readSource is how readState reads: from each vhost's definitions export
// where the broker streams it (RabbitMQ 4.3.3+, by the version it reports:
// rmqversion.Version.StreamsDefinitions), the user is an administrator
// (4.3.6 answers anyone else 401 "Not administrator user") and no queue
// statistics are asked for (the export has none); from the lists
// otherwise. Measured on RabbitMQ 4.3.6 for 10,002 objects (5,000 queues,
// 5,000 bindings, one after the other on an idle broker): the export
// 0.05-0.09 s, the queue listing alone 0.16-0.26 s without statistics,
// even with only the name column, the bindings of each of the two
// exchanges 0.04-0.13 s. Before 4.3.3 the export is assembled whole and
// the lists are the quicker read: 4.0.5 took 40-44 s for the export of
// 50,002 objects, its lists 3.6 s (see readVhost).
func (c *Client) readSource(withStats bool) string {
	if withStats || !c.IsAdmin() || c.rmq.Major == 0 || !c.rmq.StreamsDefinitions() {
		return SourceLists
	}
	return SourceDefinitions
}

// readVhostsAtOnce is how many vhosts readVhosts reads at a time.
const readVhostsAtOnce = 4

// readVhosts reads the vhosts names, readVhostsAtOnce at a time, from
// source.
func (c *Client) readVhosts(ctx context.Context, names []string, infos map[string]VhostInfo, source string, withStats bool) []vhostResult {
	results := make([]vhostResult, len(names))
	g := parallel.New(readVhostsAtOnce)
	for i, name := range names {
		g.Go(func() {
			if source == SourceDefinitions {
				info := infos[name]
				results[i] = c.readVhostDefinitions(ctx, name, func() (VhostInfo, error) { return info, nil })
			} else {
				results[i] = c.readVhost(ctx, infos[name], withStats)
			}
		})
	}
	g.Wait()
	return results
}

// readsAhead are the definitions reads of the vhosts a read is for, begun
// before GET /api/vhosts has answered (readAhead), by vhost name.
type readsAhead map[string]*readAhead

type readAhead struct {
	info   VhostInfo
	ready  chan struct{} // closed once info is set
	cancel context.CancelFunc
	done   chan struct{}
	res    vhostResult
}

// readAhead begins reading each of vhosts from its definitions export at
// once, beside the vhost listing, which the mapping of each waits for:
// the export is a plan's longest request (50-90 ms for 10,002 objects on
// RabbitMQ 4.3.6), and the listing took 5-13 ms before it could begin.
// Only for up to readVhostsAtOnce named vhosts; nil otherwise (every
// vhost, or more than that: readVhosts, after the listing).
func (c *Client) readAhead(ctx context.Context, vhosts []string) readsAhead {
	if len(vhosts) == 0 || len(vhosts) > readVhostsAtOnce {
		return nil
	}
	ahead := readsAhead{}
	for _, name := range vhosts {
		if _, dup := ahead[name]; dup {
			continue
		}
		actx, cancel := context.WithCancel(ctx)
		a := &readAhead{ready: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
		ahead[name] = a
		go func() {
			defer close(a.done)
			a.res = c.readVhostDefinitions(actx, name, func() (VhostInfo, error) {
				select {
				case <-a.ready:
					return a.info, nil
				case <-actx.Done():
					return VhostInfo{}, actx.Err()
				}
			})
		}()
	}
	return ahead
}

// finish gives each read its vhost's info and returns the results of
// names (the vhosts listed), in order; the reads of vhosts not listed are
// dropped.
func (r readsAhead) finish(names []string, infos map[string]VhostInfo) []vhostResult {
	for name, a := range r {
		if info, ok := infos[name]; ok && slices.Contains(names, name) {
			a.info = info
			close(a.ready)
		} else {
			a.cancel()
		}
	}
	results := make([]vhostResult, len(names))
	for i, name := range names {
		a := r[name]
		<-a.done
		a.cancel()
		results[i] = a.res
	}
	r.drop()
	return results
}

// drop cancels every read and waits for it to end.
func (r readsAhead) drop() {
	for _, a := range r {
		a.cancel()
		<-a.done
	}
}

type vhostResult struct {
	vhost  *topology.Vhost
	stats  map[string]QueueStats
	owned  map[string]string
	keys   map[string]string
	unread []Unread
	err    error
}

// vhostJSON is an element of GET /api/vhosts.
type vhostJSON struct {
	Name             string               `json:"name"`
	Description      string               `json:"description"`
	Tags             rabbithole.VhostTags `json:"tags"`
	DefaultQueueType string               `json:"default_queue_type"`
	Tracing          bool                 `json:"tracing"`
	Protected        bool                 `json:"protected_from_deletion"`
	Metadata         *vhostMetadataJSON   `json:"metadata"`
}

type vhostMetadataJSON struct {
	Description      string               `json:"description"`
	Tags             rabbithole.VhostTags `json:"tags"`
	DefaultQueueType string               `json:"default_queue_type"`
	Protected        bool                 `json:"protected_from_deletion"`
}

func (c *Client) listVhosts(ctx context.Context) (map[string]VhostInfo, error) {
	var list []vhostJSON
	q := url.Values{"columns": {"name,description,tags,default_queue_type,tracing,protected_from_deletion,metadata"}}
	if err := c.do(ctx, &request{method: http.MethodGet, path: "vhosts", query: q, op: "list vhosts"}, listOf[vhostJSON]{&list}); err != nil {
		return nil, err
	}
	out := make(map[string]VhostInfo, len(list))
	for _, v := range list {
		info := VhostInfo{Name: v.Name, Description: v.Description, Tags: cleanTags(v.Tags), DefaultQueueType: v.DefaultQueueType, Tracing: v.Tracing, Protected: v.Protected}
		if m := v.Metadata; m != nil {
			info.Protected = info.Protected || m.Protected
			if info.Description == "" {
				info.Description = m.Description
			}
			if len(info.Tags) == 0 {
				info.Tags = cleanTags(m.Tags)
			}
			if info.DefaultQueueType == "" || info.DefaultQueueType == "undefined" {
				info.DefaultQueueType = m.DefaultQueueType
			}
		}
		// 3.10 reports "undefined" when no default queue type is set.
		if info.DefaultQueueType == "undefined" {
			info.DefaultQueueType = ""
		}
		// 4.x fills in "classic" for a vhost declared without one: the
		// value the broker chose is not the user's, and it means what no
		// default queue type means.
		if info.DefaultQueueType == topology.QueueClassic && c.RabbitMQVersion().FillsDefaultQueueType() {
			info.DefaultQueueType = ""
		}
		out[v.Name] = info
	}
	return out, nil
}

func cleanTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// The wire shapes and their mapping onto the model are pkg/definitions'
// (its lenient mode): the definitions document and the list endpoints give
// the same objects.
type (
	exchangeJSON = definitions.Exchange
	queueJSON    = definitions.Queue
	bindingJSON  = definitions.Binding
	policyJSON   = definitions.Policy
)

// streamDecoder is an answer decoded piece by piece rather than buffered
// whole: a definitions document of 50,000 objects is some 10 MB of JSON.
type streamDecoder interface {
	decodeStream(dec *json.Decoder) error
}

// readerDecoder is an answer decoded from the stream itself, without
// encoding/json's Decoder (definitions.Document.DecodeReaderTo).
type readerDecoder interface {
	decodeReader(r io.Reader) error
}

// definitionsJSON is a per-vhost definitions answer, streamed (see
// definitions.Document.DecodeStream).
type definitionsJSON struct{ definitions.Document }

func (d *definitionsJSON) decodeStream(dec *json.Decoder) error { return d.DecodeStream(dec) }

// mappedDefinitions is a per-vhost definitions answer whose queues and
// bindings are mapped onto the model as they are decoded
// (definitions.Document.DecodeStreamTo); mapper.Finish maps the rest.
type mappedDefinitions struct {
	definitions.Document
	// info waits for what GET /api/vhosts says of the vhost, which the
	// mapping needs (its default queue type) and which may come after
	// the export's first bytes (readAhead).
	info   func() (VhostInfo, error)
	mapper *definitions.LiveMapper
}

func (d *mappedDefinitions) decodeReader(r io.Reader) error {
	info, err := d.info()
	if err != nil {
		return err
	}
	// Afresh for a retried read.
	d.mapper = definitions.NewLiveMapper(definitions.LiveVhost{Name: info.Name, Description: info.Description,
		DefaultQueueType: info.DefaultQueueType, Tags: info.Tags, Export: true})
	return d.DecodeReaderTo(r, d.mapper)
}

// listOf decodes a list answer into *items, leniently (see
// definitions.DecodeList).
type listOf[T any] struct{ items *[]T }

func (l listOf[T]) decodeStream(dec *json.Decoder) error {
	var err error
	*l.items, err = definitions.DecodeList[T](dec)
	return err
}

// queueColumns are the columns of a queue listing: the queue's definition,
// and with statistics its depth and consumers; exchangeColumns those of an
// exchange listing.
const (
	queueColumns      = "name,type,arguments,durable,auto_delete,exclusive,internal_owner"
	queueStatsColumns = queueColumns + ",messages,consumers"
	exchangeColumns   = "name,type,durable,auto_delete,internal,arguments"
)

// readVhost reads one vhost from the per-kind lists, at once: queues,
// exchanges, bindings, policies and operator policies. Every user with
// access to the vhost may list them, and they are the quicker read:
// RabbitMQ 4.0.5 takes 40-44 s for GET /api/definitions/{vhost} of 25,000
// queues and 25,000 bindings, and 1.1 s (queues without statistics),
// 2.5-3.2 s (bindings) and 0.01 s (exchanges, policies) for the lists
// (measured one after the other on an idle broker). The statistics
// (withStats) make the queue listing take 12.6 s there: a plan reads them
// only for the queues it would delete or replace.
func (c *Client) readVhost(ctx context.Context, info VhostInfo, withStats bool) vhostResult {
	res := vhostResult{keys: map[string]string{}}
	var defs definitionsJSON
	queues, unread, err := c.listVhost(ctx, info.Name, withStats, &defs)
	if err != nil {
		res.err = err
		return res
	}
	res.unread = unread
	if withStats {
		res.stats = map[string]QueueStats{}
		for _, q := range queues {
			if definitions.SkipQueue(q) {
				continue
			}
			res.stats[q.Name] = queueStats(q)
		}
	}
	for _, q := range queues {
		if owner := ownerOf(q.InternalOwner); owner != "" {
			if res.owned == nil {
				res.owned = map[string]string{}
			}
			res.owned[q.Name] = owner
		}
	}
	defs.Queues = queues
	res.vhost, res.err = definitions.MapLive(definitions.LiveVhost{Name: info.Name, Description: info.Description,
		DefaultQueueType: info.DefaultQueueType, Tags: info.Tags, Listed: queues, PropertiesKeys: res.keys}, &defs.Document)
	return res
}

// listVhost lists vhost name's queues (with their statistics when
// withStats), and its exchanges, bindings and policies of every kind into
// defs, at once. A kind of policy the user may not list is unread, not a
// failure; a vhost deleted meanwhile is the error (absent, not a
// failure), before any other.
func (c *Client) listVhost(ctx context.Context, name string, withStats bool, defs *definitionsJSON) (queues []queueJSON, unread []Unread, err error) {
	get := func(kind, path string, q url.Values, out any) error {
		return c.do(ctx, &request{method: http.MethodGet, path: path, query: q,
			op: fmt.Sprintf("list %s of vhost %q", kind, name), vhost: name}, out)
	}
	qcols := url.Values{"columns": {queueColumns}, "disable_stats": {"true"}}
	if withStats {
		qcols = url.Values{"columns": {queueStatsColumns}}
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	list := func(f func() error) {
		wg.Go(func() {
			if err := f(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	optional := func(k kind.Kind, label, path string, out any) func() error {
		return func() error {
			err := get(label, path, nil, out)
			if errors.Is(err, ErrForbidden) {
				mu.Lock()
				unread = append(unread, Unread{Vhost: name, Kind: k, Reason: refusedReason(err)})
				mu.Unlock()
				return nil
			}
			return err
		}
	}
	list(func() error { return get("queues", seg("queues", name), qcols, listOf[queueJSON]{&queues}) })
	list(func() error {
		if err := get("exchanges", seg("exchanges", name), url.Values{"columns": {exchangeColumns}}, listOf[exchangeJSON]{&defs.Exchanges}); err != nil {
			return err
		}
		listed(ctx, name, defs.Exchanges, false)
		return c.listBindings(ctx, name, defs.Exchanges, &defs.Bindings)
	})
	for _, k := range kind.PolicyKinds() {
		spec, _ := kind.Of(k)
		list(optional(k, spec.Plural, seg(spec.APIPath, name), defs.PoliciesOf(k)))
	}
	wg.Wait()
	if len(errs) > 0 {
		for _, err := range errs {
			if errors.Is(err, ErrVhostNotFound) {
				return nil, nil, err
			}
		}
		return nil, nil, errs[0]
	}
	sort.Slice(unread, func(i, j int) bool { return unread[i].Kind < unread[j].Kind })
	return queues, unread, nil
}

// readVhostDefinitions reads one vhost from its definitions export (GET
// /api/definitions/{vhost}) and, at once, its exchange listing, which
// gives every exchange: RabbitMQ 4.3 leaves internal exchanges out of the
// export (mqctl's own ownership record is one). What else the lists give
// and the export lacks: exclusive queues are left out of it (their
// bindings, which 4.3.6 keeps in it, go with them: definitions.LiveVhost's
// Export), each binding's properties_key (only a delete needs it:
// ListPropertiesKeys, BindingPropertiesKey) and a queue's internal_owner
// (only a delete or replace needs it: Placement.Owner). The queues' types
// are in the 4.3 export; the vhost's metadata comes from GET /api/vhosts,
// as for the lists.
func (c *Client) readVhostDefinitions(ctx context.Context, name string, info func() (VhostInfo, error)) vhostResult {
	var (
		defs      = mappedDefinitions{info: info}
		exchanges []exchangeJSON
		exErr     error
		wg        sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		exErr = c.do(ctx, &request{method: http.MethodGet, path: seg("exchanges", name), query: url.Values{"columns": {exchangeColumns}},
			op: fmt.Sprintf("list exchanges of vhost %q", name), vhost: name}, listOf[exchangeJSON]{&exchanges})
		if exErr == nil {
			listed(ctx, name, exchanges, true)
		}
	}()
	err := c.do(ctx, &request{method: http.MethodGet, path: seg("definitions", name),
		op: fmt.Sprintf("read the definitions of vhost %q", name), vhost: name}, &defs)
	wg.Wait()
	// A vhost deleted meanwhile says so first: absent, not a failure.
	for _, e := range []error{err, exErr} {
		if errors.Is(e, ErrVhostNotFound) {
			return vhostResult{err: e}
		}
	}
	if err = errors.Join(err, exErr); err != nil {
		return vhostResult{err: err}
	}
	defs.Exchanges = exchanges
	v, err := defs.mapper.Finish(&defs.Document)
	return vhostResult{vhost: v, err: err}
}

// ListPropertiesKeys lists the bindings of vhost and returns each one's
// properties_key by topology.Binding.Key(), which a read from the
// definitions does not record (Live.PropertiesKeys): a delete of many
// bindings takes them from one listing, where BindingPropertiesKey asks
// once per binding. The error wraps ErrVhostNotFound when the vhost does
// not exist.
func (c *Client) ListPropertiesKeys(ctx context.Context, vhost string) (map[string]string, error) {
	var exchanges []exchangeJSON
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("exchanges", vhost), query: url.Values{"columns": {"name"}},
		op: fmt.Sprintf("list exchanges of vhost %q", vhost), vhost: vhost}, listOf[exchangeJSON]{&exchanges}); err != nil {
		return nil, err
	}
	var bindings []bindingJSON
	if err := c.listBindings(ctx, vhost, exchanges, &bindings); err != nil {
		return nil, err
	}
	keys := make(map[string]string, len(bindings))
	for _, b := range bindings {
		if tb, ok := definitions.MapBinding(b); ok {
			keys[tb.Key()] = b.PropertiesKey
		}
	}
	return keys, nil
}

// bindingsBySource is how many exchanges a vhost may have for listBindings
// to list their bindings exchange by exchange, bindingsBySourceAtOnce at
// a time, rather than with one GET /api/bindings/{vhost}.
const (
	bindingsBySource       = 32
	bindingsBySourceAtOnce = 4
)

// refusedReason is why a list was not read, from the broker's refusal.
// (RabbitMQ 3.10.8 and 4.0.5 list policies and operator policies to any
// management user with access to the vhost: a refusal comes from the
// broker's authorisation backend or a proxy, so the reason is its own.)
func refusedReason(err error) string {
	return err.Error()
}

// BindingPropertiesKey returns the broker's properties_key for b in vhost
// (needed to delete it), with one GET /api/bindings/{vhost}/e/{source}/…;
// the error wraps ErrNotFound when no such binding exists.
func (c *Client) BindingPropertiesKey(ctx context.Context, vhost string, b *topology.Binding) (string, error) {
	d := "q"
	if b.DestinationType == topology.DestExchange {
		d = "e"
	}
	var list []bindingJSON
	op := fmt.Sprintf("list bindings from exchange %q to %s %q in vhost %q", b.Source, b.DestinationType, b.Destination, vhost)
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("bindings", vhost, "e", b.Source, d, b.Destination), op: op, vhost: vhost}, &list); err != nil {
		return "", err
	}
	want := b.Arguments.Canonical()
	for _, x := range list {
		if x.RoutingKey == b.RoutingKey && topology.Args(x.Arguments).Canonical() == want {
			return x.PropertiesKey, nil
		}
	}
	if len(list) == 0 && !c.vhostExists(ctx, vhost) {
		// This endpoint answers [] rather than 404 for a missing vhost.
		return "", c.apiError(&request{op: op, vhost: vhost}, http.StatusNotFound, errorBody{}, true)
	}
	return "", fmt.Errorf("binding from exchange %q to %s %q with routing key %q in vhost %q: %w",
		b.Source, b.DestinationType, b.Destination, b.RoutingKey, vhost, ErrNotFound)
}

// ownerOf describes a queue's internal_owner as the broker reports it
// (false, or {"name", "kind", "virtual_host"}); "" when none.
func ownerOf(v any) string {
	switch o := v.(type) {
	case map[string]any:
		name, _ := o["name"].(string)
		k, _ := o["kind"].(string)
		if name == "" {
			return "a plugin"
		}
		if k != "" {
			return fmt.Sprintf("%s %q", k, name)
		}
		return fmt.Sprintf("%q", name)
	case string:
		if o != "" && o != "false" {
			return o
		}
	}
	return ""
}
