package broker

import (
	"context"
	"testing"
)

func TestAMQPURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		base     string
		amqp     int
		amqps    int
		override string
		want     string
		wantErr  bool
	}{
		{name: "reported listener port", base: "http://rabbit:15672", amqp: 5673, want: "amqp://u:p@rabbit:5673"},
		{name: "no listener reported: 5672", base: "http://rabbit:15672", want: "amqp://u:p@rabbit:5672"},
		{name: "https management: amqps on the TLS listener", base: "https://rabbit:15671", amqp: 5672, amqps: 5676, want: "amqps://u:p@rabbit:5676"},
		{name: "IPv6 host", base: "http://[::1]:15672", amqp: 5672, want: "amqp://u:p@[::1]:5672"},
		{name: "override keeps its own credentials", base: "http://rabbit:15672", override: "amqp://other:secret@mq:5999", want: "amqp://other:secret@mq:5999"},
		{name: "override without credentials gets the client's", base: "http://rabbit:15672", override: "amqp://mq:5999/", want: "amqp://u:p@mq:5999"},
		{name: "override that is not AMQP", base: "http://rabbit:15672", override: "http://mq:5999", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{endpoints: []string{tc.base}, user: "u", pass: "p", listenersRead: true, amqpPort: tc.amqp, amqpsPort: tc.amqps}
			got, err := c.AMQPURL(context.Background(), tc.override)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if got != tc.want {
				t.Errorf("AMQPURL = %q, want %q", got, tc.want)
			}
		})
	}
}
