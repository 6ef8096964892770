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

	"github.com/watchdogd/watchdogd/internal/deliver"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Client posts alerts to every Alertmanager of a cluster, as Prometheus
// does: members share what one of them receives, so an alert one accepted
// is delivered.
type Client struct {
	// URLs are the members' base URLs.
	URLs    []string
	HTTP    *http.Client
	Timeout time.Duration
}

// maxAnswer is how much of an error answer is read, for the log line.
const maxAnswer = 4 << 10

// Post sends alerts to every member; it fails only when none took them,
// with the verdict of the most hopeful failure (one worth retrying wins
// over one that is not).
func (c *Client) Post(ctx context.Context, alerts []Alert) (deliver.Verdict, error) {
	body, err := json.Marshal(alerts)
	if err != nil {
		return deliver.Verdict{}, fmt.Errorf("encode alerts: %w", err)
	}
	var errs []error
	var verdict deliver.Verdict
	for _, base := range c.URLs {
		v, err := c.post(ctx, base, body)
		if err == nil {
			return deliver.Verdict{}, nil
		}
		errs = append(errs, err)
		if v.Retry || len(errs) == 1 {
			verdict = v
		}
	}
	return verdict, errors.Join(errs...)
}

func (c *Client) post(ctx context.Context, base string, body []byte) (deliver.Verdict, error) {
	target, err := url.JoinPath(base, "api/v2/alerts")
	if err != nil {
		return deliver.Verdict{Code: "url"}, fmt.Errorf("alertmanager %s: %w", base, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return deliver.Verdict{Code: "url"}, fmt.Errorf("alertmanager %s: %w", base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "watchdogd")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return deliver.Transport(err), fmt.Errorf("alertmanager %s: %w", base, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	v := Classify(resp.StatusCode)
	if v == (deliver.Verdict{}) {
		return v, nil
	}
	return v, fmt.Errorf("alertmanager %s: %s: %s", base, resp.Status, term.OneLine(errors.New(string(answer))))
}

// Classify is the verdict on Alertmanager's answer: 200 took the alerts;
// 429 and 5xx are worth retrying; any other answer (400: alerts it cannot
// take) is not. Sending an alert twice is harmless: Alertmanager merges
// it, so no answer leaves an attempt uncertain.
func Classify(status int) deliver.Verdict {
	switch {
	case status >= 200 && status < 300:
		return deliver.Verdict{}
	case status == http.StatusTooManyRequests:
		return deliver.Verdict{Retry: true, RateLimited: true, Code: strconv.Itoa(status)}
	case status >= 500:
		return deliver.Verdict{Retry: true, Code: strconv.Itoa(status)}
	}
	return deliver.Verdict{Code: strconv.Itoa(status)}
}
