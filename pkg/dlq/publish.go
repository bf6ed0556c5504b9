package dlq

import (
	"fmt"
	"maps"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultRetryHeader is the retry-attempt header replay removes unless
// told otherwise (--retry-header).
const DefaultRetryHeader = "x-retry-count"

// RepublishOptions are Republish's choices.
type RepublishOptions struct {
	// RetryHeaders are removed from the message.
	RetryHeaders []string
	// User is the publishing user: a user-id other than this is dropped.
	User string
	// DropExpiration republishes without an expiration: neither the one
	// restored from x-death nor one the message carries.
	DropExpiration bool
}

// Republish builds what replay publishes for m: the body and every
// property unchanged (message id, correlation id, timestamp, content type
// and encoding, delivery mode, priority, type, app id, reply-to, other
// headers), except:
//   - the broker's dead-lettering headers (x-death, x-first-death-*,
//     x-last-death-*) and a quorum queue's x-delivery-count and (4.3)
//     x-acquired-count are removed, so the message starts fresh;
//   - each header in retryHeaders is removed: a consumer that counts
//     attempts starts again from zero (removing, rather than setting 0,
//     keeps whatever type the application used out of the question);
//   - CC is set to t.CC (the original extra routing keys), or removed;
//   - the expiration (per-message TTL) the message was published with is
//     restored: the broker removes it when it dead-letters a message and
//     records it in that x-death entry as original-expiration, and the
//     entry of the message's first dead-lettering (Deaths.Origin) holds the
//     publisher's. RabbitMQ starts a message's TTL when it enters a queue,
//     so the replayed message gets its whole TTL again from the replay:
//     one whose TTL ran out in the DLQ does not expire at once, and one
//     that died because it expired expires again (dead-lettered back)
//     unless consumed within it. An expiration the message carries now
//     was set after it died, and is kept; o.DropExpiration drops either;
//   - an expiration of "0" (expire unless a consumer takes it at once) is
//     dropped;
//   - user-id is dropped when it is not o.User: the broker refuses a
//     publish whose user-id is not the publishing user's own.
//
// notes describe the last three when they apply.
func Republish(m *Message, t Target, o RepublishOptions) (pub amqp.Publishing, notes []string) {
	h := maps.Clone(m.Headers)
	if h == nil {
		h = amqp.Table{}
	}
	for _, k := range deathHeaders {
		delete(h, k)
	}
	delete(h, HeaderDeliveryCount)
	delete(h, HeaderAcquiredCount)
	for _, k := range o.RetryHeaders {
		delete(h, k)
	}
	delete(h, HeaderCC)
	if len(t.CC) > 0 {
		cc := make([]any, len(t.CC))
		for i, k := range t.CC {
			cc[i] = k
		}
		h[HeaderCC] = cc
	}
	if len(h) == 0 {
		h = nil
	}
	p := m.Properties
	pub = amqp.Publishing{
		Headers:         h,
		ContentType:     p.ContentType,
		ContentEncoding: p.ContentEncoding,
		DeliveryMode:    p.DeliveryMode,
		Priority:        p.Priority,
		CorrelationId:   p.CorrelationID,
		ReplyTo:         p.ReplyTo,
		Expiration:      p.Expiration,
		MessageId:       p.MessageID,
		Timestamp:       p.Timestamp,
		Type:            p.Type,
		UserId:          p.UserID,
		AppId:           p.AppID,
		Body:            m.Body,
	}
	if pub.Expiration == "" && !o.DropExpiration {
		if origin, ok := m.Deaths.Origin(); ok && origin.OriginalExpiration != "" {
			exp := origin.OriginalExpiration
			switch {
			case !validExpiration(exp):
				notes = append(notes, fmt.Sprintf("original expiration %q from x-death not restored: not a number of milliseconds up to ten years (the broker would refuse the publish)", exp))
			case exp == "0":
				pub.Expiration = exp // dropped below, with its note
			case origin.Reason == "expired":
				pub.Expiration = exp
				notes = append(notes, fmt.Sprintf("expiration %s ms restored from x-death: it died because it expired, and expires again, back into the DLQ, unless a consumer takes it within %s ms of the replay (or the queue's message TTL, where that is shorter); --drop-expiration replays it without one", exp, exp))
			default:
				pub.Expiration = exp
				notes = append(notes, fmt.Sprintf("expiration %s ms restored from x-death (the broker removed it when it dead-lettered the message); its TTL counts again from the replay", exp))
			}
		}
	}
	if o.DropExpiration {
		pub.Expiration = ""
	}
	if pub.Expiration == "0" {
		pub.Expiration = ""
		notes = append(notes, `expiration "0" dropped: the message would expire at once`)
	}
	if pub.UserId != "" && pub.UserId != o.User {
		notes = append(notes, fmt.Sprintf("user-id %q dropped: the broker accepts only the publishing user's own (%q)", pub.UserId, o.User))
		pub.UserId = ""
	}
	return pub, notes
}

// validExpiration reports whether exp is an expiration the broker takes:
// a whole number of milliseconds, 0 to ten years (rabbit_misc:check_expiry,
// 3.10 to 4.3).
func validExpiration(exp string) bool {
	n, err := strconv.ParseUint(exp, 10, 64)
	return err == nil && n <= maxExpiration
}

// maxExpiration is the longest expiration RabbitMQ accepts: ten years.
const maxExpiration = 315_360_000_000
