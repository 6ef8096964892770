package cycle

import (
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/notify"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
	"go.uber.org/zap"
)

// Freeze renders each decided action through its outlet and freezes the
// text in the plan: what goes out is what was decided, whenever it is
// delivered.
func (c *Cycle) Freeze(p *model.Plan, st model.Ledger, rep scan.Report, now time.Time) {
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
		reasons[r.ID] = r.Reason.Words()
	}
	for i := range p.Actions {
		a := &p.Actions[i]
		e := episodes[a.EpisodeID]
		f, ok := findings[e.Identity]
		if !ok {
			f = policy.StoredFinding(e)
		}
		text := ""
		if pol := c.Config.Policy[e.Kind]; pol != nil {
			text = pol.Text
		}
		body, err := c.Outlets.Render(notify.Rendering{Action: *a, Episode: e, Finding: f, Reason: reasons[e.ID], Text: text, Now: now})
		if err != nil {
			// Its delivery will fail, saying why; the rest is decided.
			c.Log.Error("render action", zap.String("key", a.Key), zap.String("action", string(a.Kind)), zap.Error(err))
			body = notify.EncodeText(err.Error())
		}
		a.Body = body
	}
}
