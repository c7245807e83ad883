package client

import (
	"context"
	"strconv"

	"github.com/resolute-ml/resolute"
)

// Webhooks lists the webhooks (administrators).
func (c *Client) Webhooks(ctx context.Context) ([]resolute.Webhook, error) {
	var out resolute.WebhooksResponse
	err := c.do(ctx, "GET", "/api/v1/webhooks", nil, nil, &out)
	return out.Webhooks, err
}

// CreateWebhook adds a webhook (administrators).
func (c *Client) CreateWebhook(ctx context.Context, w resolute.Webhook) (resolute.Webhook, error) {
	var out resolute.WebhookResponse
	err := c.do(ctx, "POST", "/api/v1/webhooks", nil, w, &out)
	return out.Webhook, err
}

// DeleteWebhook removes a webhook (administrators).
func (c *Client) DeleteWebhook(ctx context.Context, id int64) error {
	return c.do(ctx, "DELETE", "/api/v1/webhooks/"+strconv.FormatInt(id, 10), nil, nil, nil)
}

// TestWebhook sends a test event to a webhook now (administrators).
func (c *Client) TestWebhook(ctx context.Context, id int64) error {
	return c.do(ctx, "POST", "/api/v1/webhooks/"+strconv.FormatInt(id, 10)+"/test", nil, nil, nil)
}

// SetExperimentLogRetention keeps an experiment's logs for days days, or
// for ever with -1.
func (c *Client) SetExperimentLogRetention(ctx context.Context, id int64, days int) error {
	return c.do(ctx, "PUT", "/api/v1/experiments/"+strconv.FormatInt(id, 10)+"/retain_logs", nil,
		resolute.RetainLogsRequest{NumDays: days}, nil)
}

// CleanupLogs deletes the task logs past their retention now
// (administrators) and says how many lines went.
func (c *Client) CleanupLogs(ctx context.Context) (int64, error) {
	var out resolute.CleanupLogsResponse
	err := c.do(ctx, "POST", "/api/v1/cleanup_logs", nil, nil, &out)
	return out.RemovedCount, err
}
