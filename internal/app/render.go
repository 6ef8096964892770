package app

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// textBody is a nudge's or a log action's frozen body.
type textBody struct {
	Text string `json:"text"`
}

func encodeText(s string) string {
	b, _ := json.Marshal(textBody{Text: s})
	return string(b)
}

func decodeText(body string) string {
	var t textBody
	if json.Unmarshal([]byte(body), &t) != nil {
		return body
	}
	return t.Text
}

// render freezes each decided action's content: what goes out is what was
// decided, whenever it is delivered.
func render(p *model.Plan, st model.Ledger, rep scan.Report, cfg *config.Config, now time.Time) {
	episodes := map[string]model.Episode{}
	for _, e := range st.Open {
		episodes[e.ID] = e
	}
	for _, e := range p.Open {
		episodes[e.ID] = e
	}
	findings := map[string]scan.Finding{}
	for _, f := range rep.Findings {
		findings[policy.Identity(f)] = f
	}
	reasons := map[string]string{}
	for _, r := range p.Resolve {
		reasons[r.ID] = r.Reason
	}
	for i := range p.Actions {
		a := &p.Actions[i]
		e := episodes[a.EpisodeID]
		f, ok := findings[e.Identity]
		if !ok {
			f = storedFinding(e)
		}
		switch a.Kind {
		case model.ActionSlack:
			a.Body = notify.Render(f, notify.RenderOptions{Mention: a.Mention, Reply: a.ParentKey != "",
				KindChange: strings.HasPrefix(a.Seq, "kind/"), Now: now}).Encode()
		case model.ActionSlackUpdate:
			orig := notify.Render(f, notify.RenderOptions{Now: now})
			for _, pa := range e.Actions {
				if pa.Key == a.ParentKey {
					if m, err := notify.DecodeMessage(pa.Body); err == nil {
						orig = m
					}
				}
			}
			a.Body = notify.RenderResolved(orig, reasons[e.ID], now.Sub(e.Since)).Encode()
		case model.ActionNudge, model.ActionCancelAndNudge:
			a.Body = encodeText(cfg.Policy[e.Kind].Text)
		default:
			a.Body = encodeText(logLine(f))
		}
	}
}

// storedFinding is the finding an episode last saw (it is no longer in the
// report: the episode is resolving).
func storedFinding(e model.Episode) scan.Finding {
	var f scan.Finding
	if json.Unmarshal([]byte(e.Finding), &f) != nil || f.Kind == "" {
		f = scan.Finding{Kind: e.Kind, SessionID: e.SessionID, TaskID: e.TaskID, TaskTitle: e.TaskTitle, WorkspaceID: e.WorkspaceID}
	}
	f.SinceTime = e.Since
	return f
}

func logLine(f scan.Finding) string {
	return model.KindWords(f.Kind) + " on " + f.TaskTitle + " (session " + f.SessionID + ", " +
		term.Minutes(time.Duration(f.AgeSeconds)*time.Second) + ")"
}
