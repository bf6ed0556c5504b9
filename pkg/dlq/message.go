package dlq

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Message is one dead letter as read from a queue.
type Message struct {
	// Index is the message's position in this read, from 1.
	Index int
	// Exchange and RoutingKey are how the message reached the queue: for a
	// dead letter, the dead-letter exchange and the dead-letter routing key.
	Exchange   string
	RoutingKey string
	// Redelivered is the broker's flag: the message had been delivered
	// before. A peek or an interrupted replay sets it; from RabbitMQ 4.3 so
	// does a delivery before the message died (a dead letter brings its
	// delivery count along, rabbitmq-server#16039 and "CQ: Propagate
	// delivery-count to DLQs"), so a rejected dead letter is marked on its
	// first read, an expired one is not.
	Redelivered bool
	Properties  Properties
	// Headers are all the message's headers, x-death included.
	Headers amqp.Table
	Body    []byte
	Deaths  Deaths

	tag uint64
}

// Properties are a message's AMQP basic properties other than headers.
type Properties struct {
	MessageID       string    `json:"message_id,omitempty"`
	CorrelationID   string    `json:"correlation_id,omitempty"`
	Timestamp       time.Time `json:"timestamp,omitzero"`
	ContentType     string    `json:"content_type,omitempty"`
	ContentEncoding string    `json:"content_encoding,omitempty"`
	DeliveryMode    uint8     `json:"delivery_mode,omitempty"`
	Priority        uint8     `json:"priority,omitempty"`
	Expiration      string    `json:"expiration,omitempty"`
	ReplyTo         string    `json:"reply_to,omitempty"`
	Type            string    `json:"type,omitempty"`
	UserID          string    `json:"user_id,omitempty"`
	AppID           string    `json:"app_id,omitempty"`
}

// fromDelivery decodes a delivery of basic.get.
func fromDelivery(index int, d amqp.Delivery) Message {
	ts := d.Timestamp
	if !ts.IsZero() {
		ts = ts.UTC()
	}
	return Message{
		Index:       index,
		Exchange:    d.Exchange,
		RoutingKey:  d.RoutingKey,
		Redelivered: d.Redelivered,
		Properties: Properties{
			MessageID:       d.MessageId,
			CorrelationID:   d.CorrelationId,
			Timestamp:       ts,
			ContentType:     d.ContentType,
			ContentEncoding: d.ContentEncoding,
			DeliveryMode:    d.DeliveryMode,
			Priority:        d.Priority,
			Expiration:      d.Expiration,
			ReplyTo:         d.ReplyTo,
			Type:            d.Type,
			UserID:          d.UserId,
			AppID:           d.AppId,
		},
		Headers: d.Headers,
		Body:    d.Body,
		Deaths:  DecodeDeaths(d.Headers),
		tag:     d.DeliveryTag,
	}
}
