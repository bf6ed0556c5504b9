package dlq

import (
	"fmt"
	"maps"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultRetryHeader is the retry-attempt header replay removes unless
// told otherwise (--retry-header).
const DefaultRetryHeader = "x-retry-count"

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
//   - an expiration of "0" (expire unless a consumer takes it at once) is
//     dropped — the broker itself strips a message's expiration when it
//     dead-letters it, so any other value was set after, and is kept;
//   - user-id is dropped when it is not user: the broker refuses a publish
//     whose user-id is not the publishing user's own.
//
// notes describe the last two when they apply.
func Republish(m *Message, t Target, retryHeaders []string, user string) (pub amqp.Publishing, notes []string) {
	h := maps.Clone(m.Headers)
	if h == nil {
		h = amqp.Table{}
	}
	for _, k := range deathHeaders {
		delete(h, k)
	}
	delete(h, HeaderDeliveryCount)
	delete(h, HeaderAcquiredCount)
	for _, k := range retryHeaders {
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
	if pub.Expiration == "0" {
		pub.Expiration = ""
		notes = append(notes, `expiration "0" dropped: the message would expire at once`)
	}
	if pub.UserId != "" && pub.UserId != user {
		notes = append(notes, fmt.Sprintf("user-id %q dropped: the broker accepts only the publishing user's own (%q)", pub.UserId, user))
		pub.UserId = ""
	}
	return pub, notes
}
