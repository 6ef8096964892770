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
	"sync"
	"time"

	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/term"
)

// Client posts alerts to every Alertmanager of a cluster, as Prometheus
// does: members share silences and what they notified, not alerts, so each
// must hear of every alert for a failover to keep it and for an end to
// reach the member holding it.
type Client struct {
	// URLs are the members' base URLs.
	URLs    []string
	HTTP    *http.Client
	Timeout time.Duration
}

// maxAnswer is how much of an error answer is read, for the log line.
const maxAnswer = 4 << 10

// Post sends alerts to every member at once, each within Timeout; it
// fails only when none took them, with the verdict of the most hopeful
// failure (one worth retrying wins over one that is not). A member that
// was down hears of the alerts at the next resend.
func (c *Client) Post(ctx context.Context, alerts []Alert) (notify.Verdict, error) {
	body, err := json.Marshal(alerts)
	if err != nil {
		return notify.Verdict{}, fmt.Errorf("encode alerts: %w", err)
	}
	type result struct {
		v   notify.Verdict
		err error
	}
	results := make([]result, len(c.URLs))
	var wg sync.WaitGroup
	for i, base := range c.URLs {
		wg.Go(func() {
			v, err := c.post(ctx, base, body)
			results[i] = result{v, err}
		})
	}
	wg.Wait()
	var errs []error
	var verdict notify.Verdict
	for _, r := range results {
		if r.err == nil {
			return notify.Verdict{}, nil
		}
		errs = append(errs, r.err)
		if r.v.Retry || len(errs) == 1 {
			verdict = r.v
		}
	}
	return verdict, errors.Join(errs...)
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
