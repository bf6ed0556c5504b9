package ownership

import (
	"reflect"
	"sync"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Predecoded are record exchanges decoded while the rest of their vhost is
// still being read: a record is decompressed and indexed from its
// exchange alone, and a read's exchange listing answers long before its
// definitions export (broker.WithListedExchanges). At 50,002 objects the
// record's decoding took a no-op plan 26-29 ms after the read; the
// export's stream takes some 0.4 s. ExtractAllWith takes a record decoded
// here when the exchange the state read holds is the one decoded, and
// decodes it itself otherwise. The zero value is ready; it may be used
// from several goroutines.
type Predecoded struct {
	mu sync.Mutex
	m  map[predecodedKey]*predecoding
}

type predecodedKey struct{ vhost, name string }

// predecoding is one record exchange's decoding; done is closed once it
// ended.
type predecoding struct {
	e       *topology.Exchange
	done    chan struct{}
	format  int64
	managed map[plan.ObjectRef]plan.Print
	err     error
}

// Add decodes e, a record exchange of vhost (IsRecord), beside the
// caller.
func (p *Predecoded) Add(vhost string, e *topology.Exchange) {
	d := &predecoding{e: e, done: make(chan struct{})}
	p.mu.Lock()
	if p.m == nil {
		p.m = map[predecodedKey]*predecoding{}
	}
	p.m[predecodedKey{vhost, e.Name}] = d // a vhost read again: the last read
	p.mu.Unlock()
	go func() {
		defer close(d.done)
		d.format, d.err = decode(vhost, e, &d.managed, func(why string) error { return errUnreadable })
	}()
}

// errUnreadable stands for a record Add could not read: ExtractAllWith
// decodes it again, for the error that names it.
var errUnreadable = unreadableError{}

type unreadableError struct{}

func (unreadableError) Error() string { return "unreadable record" }

// take is the decoding of record exchange e of vhost, once it has ended,
// when e is the exchange decoded: equal to it in every field (the same
// listing's element mapped alike; a vhost read again may hold another).
// ok is false when there is none, or it failed.
func (p *Predecoded) take(vhost string, e *topology.Exchange) (format int64, managed map[plan.ObjectRef]plan.Print, ok bool) {
	if p == nil {
		return 0, nil, false
	}
	p.mu.Lock()
	d := p.m[predecodedKey{vhost, e.Name}]
	p.mu.Unlock()
	if d == nil {
		return 0, nil, false
	}
	<-d.done
	if d.err != nil || !reflect.DeepEqual(d.e, e) {
		return 0, nil, false
	}
	return d.format, d.managed, true
}
