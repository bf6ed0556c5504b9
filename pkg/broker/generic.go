package broker

import (
	"context"
	"net/http"
)

// Requests by path, for the item drivers (items.go) and mqctl's own
// records: each names its path as segments below /api/ (escaped here), what it attempts in the user's
// words (for errors) and the vhost it addresses ("" for none). Errors are
// classified as every other request's (ErrNotFound, ErrForbidden, …).

// GetJSON reads path into out (numbers as json.Number in untyped values).
func (c *Client) GetJSON(ctx context.Context, out any, op, vhost string, path ...string) error {
	return c.do(ctx, &request{method: http.MethodGet, path: seg(path...), op: op, vhost: vhost}, out)
}

// PutJSON writes body to path.
func (c *Client) PutJSON(ctx context.Context, body any, op, vhost string, path ...string) error {
	return c.do(ctx, &request{method: http.MethodPut, path: seg(path...), body: body, op: op, vhost: vhost}, nil)
}

// DeleteJSON deletes path.
func (c *Client) DeleteJSON(ctx context.Context, op, vhost string, path ...string) error {
	return c.do(ctx, &request{method: http.MethodDelete, path: seg(path...), op: op, vhost: vhost}, nil)
}
