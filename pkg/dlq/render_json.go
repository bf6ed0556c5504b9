package dlq

import "time"

// The objects of dlq peek's and dlq replay's JSON documents
// (format_version 1) in their own types, not the model's struct tags
// (Properties, Death, FirstDeath, Target, Outcome, Overflow): a field
// renamed in the model does not change what scripts read. Their names and
// meanings are those the model's tags gave (additive changes only, else a
// new FormatVersion); TestJSONObjectsEveryField pins them.

type propertiesJSON struct {
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

func toPropertiesJSON(p Properties) propertiesJSON {
	return propertiesJSON{
		MessageID: p.MessageID, CorrelationID: p.CorrelationID, Timestamp: p.Timestamp,
		ContentType: p.ContentType, ContentEncoding: p.ContentEncoding, DeliveryMode: p.DeliveryMode,
		Priority: p.Priority, Expiration: p.Expiration, ReplyTo: p.ReplyTo, Type: p.Type,
		UserID: p.UserID, AppID: p.AppID,
	}
}

type deathJSON struct {
	Queue              string    `json:"queue"`
	Reason             string    `json:"reason"`
	Exchange           string    `json:"exchange"`
	RoutingKeys        []string  `json:"routing_keys"`
	Count              int64     `json:"count"`
	Time               time.Time `json:"time,omitzero"`
	OriginalExpiration string    `json:"original_expiration,omitempty"`
}

// toDeathsJSON maps ds, nil staying nil (the list is omitted then).
func toDeathsJSON(ds []Death) []deathJSON {
	if ds == nil {
		return nil
	}
	out := make([]deathJSON, len(ds))
	for i, d := range ds {
		out[i] = deathJSON{
			Queue: d.Queue, Reason: d.Reason, Exchange: d.Exchange, RoutingKeys: d.RoutingKeys,
			Count: d.Count, Time: d.Time, OriginalExpiration: d.OriginalExpiration,
		}
	}
	return out
}

type firstDeathJSON struct {
	Queue    string `json:"queue,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Exchange string `json:"exchange,omitempty"`
}

func toFirstDeathJSON(f FirstDeath) *firstDeathJSON {
	return &firstDeathJSON{Queue: f.Queue, Reason: f.Reason, Exchange: f.Exchange}
}

type targetJSON struct {
	Exchange    string   `json:"exchange"`
	RoutingKey  string   `json:"routing_key"`
	CC          []string `json:"cc,omitempty"`
	From        string   `json:"from"`
	OriginQueue string   `json:"origin_queue,omitempty"`
}

func toTargetJSON(t *Target) *targetJSON {
	if t == nil {
		return nil
	}
	return &targetJSON{Exchange: t.Exchange, RoutingKey: t.RoutingKey, CC: t.CC, From: t.From, OriginQueue: t.OriginQueue}
}

type outcomeJSON struct {
	Index     int         `json:"index"`
	MessageID string      `json:"message_id,omitempty"`
	Action    string      `json:"action"`
	Target    *targetJSON `json:"target,omitempty"`
	Queues    []string    `json:"queues,omitempty"`
	Routed    bool        `json:"queues_known,omitempty"`
	Kind      string      `json:"kind,omitempty"`
	Reason    string      `json:"reason,omitempty"`
	Notes     []string    `json:"notes,omitempty"`
	Copies    []string    `json:"copies,omitempty"`
}

// toOutcomesJSON maps os: [] for none.
func toOutcomesJSON(os []Outcome) []outcomeJSON {
	out := make([]outcomeJSON, len(os))
	for i, o := range os {
		out[i] = outcomeJSON{
			Index: o.Index, MessageID: o.MessageID, Action: o.Action, Target: toTargetJSON(o.Target),
			Queues: o.Queues, Routed: o.Routed, Kind: o.Kind, Reason: o.Reason, Notes: o.Notes, Copies: o.Copies,
		}
	}
	return out
}

type overflowJSON struct {
	Queue            string   `json:"queue"`
	Unit             string   `json:"unit"`
	Held             int64    `json:"held"`
	Added            int64    `json:"added"`
	Limit            int64    `json:"limit"`
	PushedOut        int64    `json:"pushed_out"`
	Lost             bool     `json:"lost"`
	Why              string   `json:"why,omitempty"`
	Exchange         string   `json:"dead_letter_exchange,omitempty"`
	DeadLetterQueues []string `json:"dead_letter_queues,omitempty"`
}

// toOverflowsJSON maps os, nil staying nil (the list is omitted then).
func toOverflowsJSON(os []Overflow) []overflowJSON {
	if os == nil {
		return nil
	}
	out := make([]overflowJSON, len(os))
	for i, o := range os {
		out[i] = overflowJSON{
			Queue: o.Queue, Unit: o.Unit, Held: o.Held, Added: o.Added, Limit: o.Limit, PushedOut: o.PushedOut,
			Lost: o.Lost, Why: o.Why, Exchange: o.Exchange, DeadLetterQueues: o.DeadLetterQueues,
		}
	}
	return out
}
