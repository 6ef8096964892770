package alertmanager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Client posts alerts to the members of an Alertmanager cluster, as
// Prometheus does, each on its own: members share silences and what they
// notified, not alerts, so each must hear of every alert for a failover
// to keep it and for an end to reach the member holding it.
type Client struct {
	// URLs are the members' base URLs.
	URLs    []string
	HTTP    *http.Client
	Timeout time.Duration
}

// maxAnswer is how much of an error answer is read, for the log line.
const maxAnswer = 4 << 10

// PostTo sends alerts to member i, within Timeout.
func (c *Client) PostTo(ctx context.Context, i int, alerts []Alert) (notify.Verdict, error) {
	body, err := json.Marshal(alerts)
	if err != nil {
		return notify.Verdict{}, fmt.Errorf("encode alerts: %w", err)
	}
	return c.post(ctx, c.URLs[i], body)
}

func (c *Client) post(ctx context.Context, base string, body []byte) (notify.Verdict, error) {
	target, err := url.JoinPath(base, "api/v2/alerts")
	if err != nil {
		return notify.Verdict{Code: "url"}, fmt.Errorf("alertmanager %s: %w", base, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return notify.Verdict{Code: "url"}, fmt.Errorf("alertmanager %s: %w", base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "watchdogd")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return notify.Transport(err), fmt.Errorf("alertmanager %s: %w", base, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	v := Classify(resp.StatusCode)
	if v == (notify.Verdict{}) {
		return v, nil
	}
	return v, fmt.Errorf("alertmanager %s: %s: %s", base, resp.Status, term.OneLine(errors.New(string(answer))))
}

// Classify is the verdict on Alertmanager's answer: 200 took the alerts;
// 429 and 5xx are worth retrying; any other answer (400: alerts it cannot
// take) is not, nor is a redirect (which is not followed: it would turn
// the POST into a GET that answers 200). Sending an alert twice is
// harmless: Alertmanager merges it.
func Classify(status int) notify.Verdict {
	switch {
	case status >= 200 && status < 300:
		return notify.Verdict{}
	case status == http.StatusTooManyRequests:
		return notify.Verdict{Retry: true, RateLimited: true, Code: strconv.Itoa(status)}
	case status >= 500:
		return notify.Verdict{Retry: true, Code: strconv.Itoa(status)}
	}
	return notify.Verdict{Code: strconv.Itoa(status)}
}
