package ledger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/watchdogd/watchdogd/internal/config"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/policy"
	"github.com/watchdogd/watchdogd/internal/scan"
)

const simSlack = `slack:
  token_file: /x
  default_channel: C1
webhooks:
  - {name: ops, url: "https://hooks.example/ops", secret_file: /x}
  - {name: audit, url: "https://hooks.example/audit", secret_file: /x}
alertmanager:
  urls: ["http://alertmanager:9093"]
`

// simPolicy is the shipped ladders plus a nudge ladder and a repeated
// stall, so that the simulation has multi-step ladders that repeat, and
// actions that are not Slack posts: a webhook and an alert whose first
// step a resolve replies to, long after later steps.
const simPolicy = simSlack + `policy:
  stalled_turn:
    steps:
      - {after: 0s, action: webhook, webhook: ops}
      - {after: 5m, action: slack}
      - {after: 30m, action: slack, mention: true}
    repeat_every: 45m
  interrupted_session:
    steps:
      - {after: 0s, action: slack}
      - {after: 20m, action: nudge}
    repeat_every: 2h
`

// simPolicyEdited is simPolicy as an operator might edit it while episodes
// are open: other ladders and periods, and a stalled turn's ladder that no
// longer repeats, so that switching between the two makes an older step the
// newest due one again — a step the ledger may have left out of what it
// loads.
const simPolicyEdited = simSlack + `policy:
  stalled_turn:
    steps:
      - {after: 0s, action: alertmanager}
      - {after: 10m, action: cancel_and_nudge}
      - {after: 20m, action: slack, mention: true}
      - {after: 25m, action: webhook, webhook: audit}
  interrupted_session:
    steps:
      - {after: 0s, action: slack}
    repeat_every: 30m
  unanswered_clarification:
    steps:
      - {after: 0s, action: slack}
      - {after: 15m, action: slack}
      - {after: 30m, action: slack, mention: true}
      - {after: 3h, action: slack, mention: true}
    repeat_every: 3h
`

// subject is one thing the simulated scans keep finding or not.
type subject struct {
	kind             model.Kind
	session, pending string
	present          bool
	since            time.Time
	turn             int
}

func (s *subject) finding(now time.Time) scan.Finding {
	turn := fmt.Sprintf("turn-%s-%d", s.session, s.turn)
	f := scan.Finding{Kind: s.kind, SessionID: s.session, TaskID: "task-" + s.session, TurnID: &turn, SinceTime: s.since,
		AgeSeconds: int64(now.Sub(s.since) / time.Second), TaskTitle: "Task " + s.session, WorkspaceID: "ws"}
	if s.pending != "" {
		f.PendingID = &s.pending
	}
	return f
}

// TestOpenStateDecidesAsTheFullHistory drives the real decision over
// simulated weeks of scans — questions flipping between unanswered and
// shadowed, conditions clearing and coming back, deliveries that land,
// fail for good, may have landed, stay held, or crash mid-claim; the policy
// edited every three hours — and at every cycle decides twice: from the actions the ledger loads for a
// decision, and from every action of every open episode. The two plans,
// the untold counts and the retry queue must be identical, and the loaded
// set must stay small while the full history grows.
func TestOpenStateDecidesAsTheFullHistory(t *testing.T) {
	ctx := context.Background()
	var policies [2]*config.Config
	for i, text := range []string{simPolicy, simPolicyEdited} {
		cfg, err := config.Parse("sim.yaml", []byte(text), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		policies[i] = cfg
	}
	// Three runs on SQLite and one on PostgreSQL (the SQL differs only in
	// how a ladder's kind is cut out of a seq) of four simulated weeks each;
	// a few days under the race detector.
	days, seeds := 28, map[string]uint64{"sqlite": 3, "postgres": 1}
	if raceBuild {
		days, seeds = 3, map[string]uint64{"sqlite": 1, "postgres": 1}
	}
	for _, d := range dialects[:2] {
		for seed := range seeds[d.name] {
			t.Run(fmt.Sprintf("%s/seed%d", d.name, seed), func(t *testing.T) {
				s := open(t, d.url(t))
				rng := rand.New(rand.NewPCG(seed, 7))
				subjects := []*subject{
					{kind: model.KindUnansweredClarification, session: "q1", pending: "p1"},
					{kind: model.KindUnansweredClarification, session: "q2", pending: "p2"},
					{kind: model.KindShadowedClarification, session: "q3", pending: "p3"},
					{kind: model.KindPendingPermission, session: "perm", pending: "x"},
					{kind: model.KindStalledTurn, session: "stall"},
					{kind: model.KindInterruptedSession, session: "parked"},
				}
				now, ids := t0, 0
				full, loaded := 0, 0
				revived := 0 // steps left out of the plain load that a decision needed
				for cycle := 0; now.Before(t0.Add(time.Duration(days) * 24 * time.Hour)); cycle++ {
					now = now.Add(time.Duration(1+rng.IntN(90)) * time.Minute)
					var findings []scan.Finding
					for _, sb := range subjects {
						switch {
						case !sb.present && rng.IntN(4) == 0:
							sb.present, sb.since, sb.turn = true, now.Add(-time.Duration(rng.IntN(40))*time.Minute), sb.turn+1
						case sb.present && rng.IntN(60) == 0:
							sb.present = false
						}
						if sb.present && sb.pending != "" && sb.kind != model.KindPendingPermission && rng.IntN(4) == 0 {
							sb.kind = map[model.Kind]model.Kind{model.KindUnansweredClarification: model.KindShadowedClarification,
								model.KindShadowedClarification: model.KindUnansweredClarification}[sb.kind]
						}
						if sb.present {
							findings = append(findings, sb.finding(now))
						}
					}
					// The policy is edited every three hours, episodes open.
					cfg := policies[int(now.Sub(t0)/(3*time.Hour))%2]
					in := func() policy.Input {
						next := ids
						return policy.Input{Now: now, Findings: findings, Policies: cfg.Policy, Routing: cfg.Routing(),
							Resolves: map[model.ActionKind]model.ActionKind{model.ActionWebhook: model.ActionWebhook, model.ActionAlertmanager: model.ActionAlertmanager},
							Reason:   func(model.Episode) model.Reason { return model.Because(model.ClearedOther) },
							NewID:    func() string { next++; return fmt.Sprintf("ep-%06d", next) }}
					}
					st, err := s.PeekFor(ctx, func(st model.Ledger) []string { return policy.Wanted(st, in()) })
					if err != nil {
						t.Fatal(err)
					}
					plain, err := s.Peek(ctx)
					if err != nil {
						t.Fatal(err)
					}
					all := fullState(t, s, plain)
					got, want := policy.Decide(st, in()), policy.Decide(all, in())
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("cycle %d at %s: the loaded actions decide\n%+v\nevery action decides\n%+v", cycle, now.Sub(t0), got, want)
					}
					ids += len(got.Open)
					revived += storedLeftOut(policy.Wanted(plain, in()), plain, all)
					if g, w := policy.Untold(st), policy.Untold(all); !reflect.DeepEqual(g, w) {
						t.Fatalf("cycle %d: untold %v, from every action %v", cycle, g, w)
					}
					g, _ := policy.RetryFailed(plain, "", now)
					if w, _ := policy.RetryFailed(all, "", now); !reflect.DeepEqual(g, w) {
						t.Fatalf("cycle %d: retry queue %v, from every action %v", cycle, g.Requeue, w.Requeue)
					}
					for i, e := range st.Open {
						if n := len(e.Actions); n > 0 && e.Actions[n-1].Key != all.Open[i].Actions[len(all.Open[i].Actions)-1].Key {
							t.Fatalf("cycle %d: %s's last action differs", cycle, e.ID)
						}
						loaded, full = loaded+len(e.Actions), full+len(all.Open[i].Actions)
					}
					if _, _, err := s.Decide(ctx, func(model.Ledger) (model.Plan, error) { return got, nil }); err != nil {
						t.Fatal(err)
					}
					deliverSome(t, s, rng, now)
				}
				t.Logf("over the run: %d actions loaded for decisions, of %d in the open episodes' histories; %d old steps due again",
					loaded, full, revived)
				if loaded*2 > full {
					t.Errorf("loaded %d of %d actions: the history is not left out", loaded, full)
				}
				if revived == 0 {
					t.Error("no policy edit made a left-out step due again: the run does not test the lookup")
				}
			})
		}
	}
}

// storedLeftOut counts the wanted keys (due steps missing from the plain
// load) that are stored: old steps that an edited policy made due again,
// which only the lookup brings into the decision.
func storedLeftOut(wanted []string, plain, all model.Ledger) int {
	stored, loaded := map[string]bool{}, map[string]bool{}
	for i := range all.Open {
		for _, a := range all.Open[i].Actions {
			stored[a.Key] = true
		}
		for _, a := range plain.Open[i].Actions {
			loaded[a.Key] = true
		}
	}
	n := 0
	for _, k := range wanted {
		if stored[k] && !loaded[k] {
			n++
		}
	}
	return n
}

// fullState is st with every action of each open episode.
func fullState(t *testing.T, s *ledger.Store, st model.Ledger) model.Ledger {
	t.Helper()
	out := model.Ledger{Open: make([]model.Episode, len(st.Open))}
	for i, e := range st.Open {
		full, err := s.Episode(context.Background(), e.ID)
		if err != nil {
			t.Fatal(err)
		}
		out.Open[i] = full
	}
	return out
}

// deliverSome settles the due actions the way deliveries end: most land,
// some fail for good, some may have landed and are retried, some are held,
// some are left claimed by a holder that crashed.
func deliverSome(t *testing.T, s *ledger.Store, rng *rand.Rand, now time.Time) {
	t.Helper()
	ctx := context.Background()
	due, err := s.DueActions(ctx, now, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range due {
		r := rng.IntN(20)
		if r == 0 {
			continue // held: a silence, quiet hours
		}
		token := uuid.NewString()
		if _, ok, err := s.Claim(ctx, d.Key, "sim", token, now, 2*time.Minute); err != nil || !ok {
			t.Fatalf("claim %s: %v %v", d.Key, ok, err)
		}
		var o model.Outcome
		switch r {
		case 1:
			continue // the holder crashed: claimed until the claim goes stale
		case 2, 5:
			o = model.Outcome{State: model.StateFailed, Error: "channel_not_found"}
		case 3:
			o = model.Outcome{State: model.StatePending, Error: "timeout", Uncertain: true, NextAttempt: now.Add(5 * time.Second)}
		case 4, 6, 7:
			o = model.Outcome{State: model.StateSuperseded, Error: "the turn moved on"}
		default:
			o = model.Outcome{State: model.StateDelivered, ResultChannel: "C1", ResultTS: fmt.Sprintf("%d.000100", now.Unix())}
		}
		if err := s.Settle(ctx, d.Key, token, o, now); err != nil {
			t.Fatalf("settle %s: %v", d.Key, err)
		}
	}
}
