package flow

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Here is the broker a plan is made against, as the URIs of its shovels
// name it (Options.Here): a shovel's URI that names a host is read by the
// node the shovel runs on, so a loopback address, "localhost" or the
// node's own host name with one of the broker's AMQP ports is this
// broker; the same hosts with another port are not (another broker on the
// node's machine, or none). Any other host may be either.
type Here struct {
	// Hosts are the host names of the broker's nodes (their node names'
	// hosts: rabbit@HOST).
	Hosts []string
	// Ports are the ports of the broker's AMQP listeners, and TLSPorts
	// those of its AMQP-over-TLS listeners.
	Ports, TLSPorts []int
}

// where says whether a shovel's URI is this broker.
type where int

const (
	whereUnknown   where = iota // mqctl cannot tell
	whereHere                   // this broker
	whereElsewhere              // another broker (or none)
)

// place reads a shovel URI without a local protocol: this broker when it
// names no host (kind.LocalVhost), else as h tells (unknown without h).
// vhost is the vhost it names; hostPort the host and port it names
// (never its credentials), for what mqctl says of it.
func (h *Here) place(uri string) (vhost, hostPort string, w where) {
	vhost, authority, ok := kind.URIVhost(uri)
	if !ok {
		return "", "", whereElsewhere // the broker refuses such a shovel
	}
	if authority == "" {
		return vhost, "", whereHere
	}
	tls := strings.HasPrefix(uri, "amqps://")
	host, port := authority, 5672
	if tls {
		port = 5671
	}
	// By net/url, not net: the flows stay offline (kind's
	// TestOfflinePackagesStayOffline).
	u := &url.URL{Host: authority}
	host = u.Hostname()
	if n, err := strconv.Atoi(u.Port()); err == nil {
		port = n
	}
	host = strings.ToLower(host)
	hostPort = host + ":" + strconv.Itoa(port)
	if strings.Contains(host, ":") {
		hostPort = "[" + host + "]:" + strconv.Itoa(port)
	}
	if h == nil || !h.isNode(host) {
		return vhost, hostPort, whereUnknown
	}
	ports := h.Ports
	if tls {
		ports = h.TLSPorts
	}
	if slices.Contains(ports, port) {
		return vhost, hostPort, whereHere
	}
	return vhost, hostPort, whereElsewhere
}

// isNode reports whether host is, to the node that reads it, the node's
// own machine: a loopback address, localhost, or a node's host name.
func (h *Here) isNode(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().IsLoopback()
	}
	return slices.ContainsFunc(h.Hosts, func(n string) bool { return strings.EqualFold(n, host) })
}

// NamesHosts reports whether a shovel of t publishes through a URI that
// names a host without the local protocol: only then does Options.Here
// tell the flows more.
func NamesHosts(t *topology.Topology) bool {
	if t == nil {
		return false
	}
	for _, v := range t.Vhosts {
		if v == nil {
			continue
		}
		for _, it := range v.Items[kind.Shovel] {
			if _, ok := kind.ShovelLocalVhost(it.Settings, "dest-uri"); ok {
				continue
			}
			for _, u := range kind.URIs(it.Settings["dest-uri"]) {
				if _, host, ok := kind.URIVhost(u); ok && host != "" {
					return true
				}
			}
		}
	}
	return false
}

// shovelled are the destinations on this broker of the shovels of a
// topology, per vhost: the queues a shovel publishes to. A shovel that
// publishes to an exchange needs none here: an exchange it can publish to
// is one clients publish to, whose bindings the flows follow already.
type shovelled map[string]*shovelDests

type shovelDests struct {
	queues map[string]bool
	// maybe are the queues a shovel may publish to, mqctl cannot tell
	// whether on this broker: what it says of each.
	maybe map[string]string
}

// shovelledInto returns where the shovels of t (in any of its vhosts)
// move messages on this broker: those whose dest-uri is this broker's
// (kind.ShovelLocalVhost: no host, or the local protocol; or one here
// says is this broker), by the vhost it names. A shovel whose URI names
// another broker is not counted; one whose URI may name this broker or
// another (here nil, or a host it cannot tell) is counted as maybe.
func shovelledInto(t *topology.Topology, here *Here) shovelled {
	out := shovelled{}
	if t == nil {
		return out
	}
	dests := func(vn string) *shovelDests {
		d := out[vn]
		if d == nil {
			d = &shovelDests{queues: map[string]bool{}, maybe: map[string]string{}}
			out[vn] = d
		}
		return d
	}
	for _, v := range t.Vhosts {
		if v == nil {
			continue
		}
		for _, it := range v.Items[kind.Shovel] {
			q := kind.ShovelDestQueue(it.Settings)
			if q == "" {
				continue
			}
			if vn, ok := kind.ShovelLocalVhost(it.Settings, "dest-uri"); ok {
				dests(vn).queues[q] = true
				continue
			}
			vn, hostPort, w := shovelPlace(it.Settings, here)
			switch w {
			case whereHere:
				dests(vn).queues[q] = true
			case whereUnknown:
				d := dests(vn)
				if _, seen := d.maybe[q]; !seen {
					d.maybe[q] = fmt.Sprintf("shovel %q publishes to a queue of that name on host %s, which mqctl cannot tell is this broker or another", it.Name, hostPort)
				}
			}
		}
	}
	return out
}

// shovelPlace places the dest-uri of a shovel with settings s (every URI
// of a list, which it connects to one of): this broker where each is and
// names the same vhost; elsewhere where each is another broker; else
// unknown, naming the first host it cannot place.
func shovelPlace(s map[string]any, here *Here) (vhost, hostPort string, w where) {
	uris := kind.URIs(s["dest-uri"])
	if len(uris) == 0 {
		return "", "", whereElsewhere
	}
	var places []where
	unknownAt := ""
	for i, u := range uris {
		v, hp, uw := here.place(u)
		if i == 0 {
			vhost, hostPort = v, hp
		}
		if uw == whereHere && v != vhost {
			uw = whereUnknown // this broker, another vhost than the first URI's
		}
		if uw == whereUnknown && unknownAt == "" {
			unknownAt = hp
		}
		places = append(places, uw)
	}
	if unknownAt != "" {
		hostPort = unknownAt
	}
	switch {
	case !slices.ContainsFunc(places, func(p where) bool { return p != whereHere }):
		return vhost, hostPort, whereHere
	case !slices.ContainsFunc(places, func(p where) bool { return p != whereElsewhere }):
		return vhost, hostPort, whereElsewhere
	}
	return vhost, hostPort, whereUnknown
}

// feeds reports whether a shovel publishes to queue q.
func (d *shovelDests) feeds(q string) bool {
	return d != nil && d.queues[q]
}

// mayFeed says what mqctl cannot tell of a shovel that may publish to
// queue q ("" for none).
func (d *shovelDests) mayFeed(q string) string {
	if d == nil {
		return ""
	}
	return d.maybe[q]
}
