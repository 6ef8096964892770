package ledger

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/watchdogd/watchdogd/internal/model"
)

// What a decision loads of the open episodes' actions. A question nobody
// answers is reminded every hour, and each reminder is an action row, so an
// episode's actions grow for as long as it stays open, and loading them
// all would hold tens of megabytes in every cycle (see
// docs/benchmarks.md, appendix). A decision (policy.Decide) reads only some
// of them, so only those are loaded:
//
//   - pending and claimed ones (superseded by a newer step, or still owed);
//   - Slack posts that went to the top of the channel — the first post, or
//     a step whose first post failed or was superseded — with their frozen
//     body, which a resolve edit starts from (no other body is loaded:
//     delivery reads its own);
//   - the newest step of each kind's ladder (an episode's kind flips
//     between the two clarification kinds) to each outlet and channel:
//     under one policy the newest due step to a destination is never
//     older, so it is this one or not decided yet;
//   - the newest visibility-change reply (kind/N: N only grows);
//   - the step sent (or maybe sent) last to each outlet and channel, by
//     when: repeats are measured from it;
//   - the newest failed action that was to tell someone, to each outlet
//     and channel (those `episodes retry` queues again);
//   - the first step sent (or maybe sent) to each outlet and channel: a
//     resolve tells that outlet the episode cleared, in reply to it.
//
// The newest action (the status page's "last action") is among them: it is
// the newest of its family.
//
// TestOpenStateDecidesAsTheFullHistory drives the real decision over
// simulated weeks and checks that it decides the same from this set as
// from every action; leaving out any one of the rules above but the first
// makes it fail. Pending and claimed actions are nearly always the newest
// of their family or the last sent too; the exception (a visibility reply
// held by a silence while the question flips twice more, which a resolve
// must supersede) is rarer than the simulation's four weeks.
//
// Only a policy edited while an episode is open (or a new release's
// default ladders) can make the newest due step an older one that was left
// out. A decision would then take it for a new step: superseding the
// pending steps after it, where the full history keeps them. So the caller
// names the steps it is about to decide (want, from policy.Wanted), and
// those among them that are stored are loaded too (loadKeys); the
// simulation edits its policy while episodes are open to hold this.
func (s *Store) openActionsSQL() string {
	return `SELECT a.key, a.episode_id, a.seq, a.step, a.repeat_no, a.action, a.channel, a.mention, a.parent_key, a.digest,
  CASE WHEN k.top_level = 1 THEN a.body ELSE '' END, a.state,
  a.created_us, a.updated_us, a.next_attempt_us, a.attempts, a.uncertain, a.claim_token, a.claimed_by, a.claimed_us,
  a.result_channel, a.result_ts, a.error, a.conflicts
FROM actions a JOIN (
  SELECT key, top_level FROM (
    SELECT a.key, a.state, CASE WHEN a.action = 'slack' AND (a.parent_key = '' OR EXISTS (SELECT 1 FROM actions f
        WHERE f.key = a.parent_key AND f.state IN ('failed', 'superseded'))) THEN 1 ELSE 0 END AS top_level, ` + sentStep + ` AS sent, ` + failedToTell + ` AS failed,
      ROW_NUMBER() OVER (PARTITION BY a.episode_id, ` + s.family() + `, a.action, a.channel ORDER BY a.created_us DESC, a.key DESC) AS newest_of_family,
      ROW_NUMBER() OVER (PARTITION BY a.episode_id, ` + sentStep + `, a.action, a.channel ORDER BY a.updated_us DESC, a.key DESC) AS last_sent,
      ROW_NUMBER() OVER (PARTITION BY a.episode_id, ` + failedToTell + `, a.action, a.channel ORDER BY a.created_us DESC, a.key DESC) AS newest_failed,
      ROW_NUMBER() OVER (PARTITION BY a.episode_id, a.action, a.channel, ` + sentStep + ` ORDER BY a.created_us, a.key) AS first_sent_to
    FROM actions a
    WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.id = a.episode_id AND e.resolved_us IS NULL)
  ) w
  WHERE w.state IN ('pending', 'claimed') OR w.top_level = 1 OR w.newest_of_family = 1
    OR (w.last_sent = 1 AND w.sent) OR (w.newest_failed = 1 AND w.failed) OR (w.first_sent_to = 1 AND w.sent)
) k ON k.key = a.key
ORDER BY a.created_us, a.key`
}

const (
	sentStep     = `(a.seq LIKE 'step/%' AND (a.state IN ('delivered', 'claimed') OR a.state = 'pending' AND a.uncertain = 1))`
	failedToTell = `(a.state = 'failed' AND a.action <> 'log')`
)

// family groups a ladder's steps ("step/<kind>/"), the visibility-change
// replies ("kind/") and anything else by its seq.
func (s *Store) family() string {
	kind := `substr(a.seq, 1, 5 + instr(substr(a.seq, 6), '/'))`
	if s.pg {
		kind = `'step/' || split_part(a.seq, '/', 2) || '/'`
	}
	return `(CASE WHEN a.seq LIKE 'step/%' THEN ` + kind + ` WHEN a.seq LIKE 'kind/%' THEN 'kind/' ELSE a.seq END)`
}

func (s *Store) loadOpen(ctx context.Context, tx querier, want func(model.Ledger) []string) (model.Ledger, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+episodeCols+" FROM episodes WHERE resolved_us IS NULL ORDER BY opened_us, id")
	if err != nil {
		return model.Ledger{}, s.wrap("read episodes", err)
	}
	var st model.Ledger
	idx := map[string]int{}
	if err := scanEpisodes(rows, func(e model.Episode) {
		idx[e.ID] = len(st.Open)
		st.Open = append(st.Open, e)
	}); err != nil {
		return model.Ledger{}, s.wrap("read episodes", err)
	}
	rows, err = tx.QueryContext(ctx, s.openActionsSQL())
	if err != nil {
		return model.Ledger{}, s.wrap("read actions", err)
	}
	err = scanActions(rows, func(a model.Action) {
		if i, ok := idx[a.EpisodeID]; ok {
			st.Open[i].Actions = append(st.Open[i].Actions, a)
		}
	})
	if err != nil || want == nil {
		return st, s.wrap("read actions", err)
	}
	return st, s.loadKeys(ctx, tx, &st, idx, want(st))
}

// loadKeys adds to st the stored actions among keys, each into its
// episode's actions in the order openActionsSQL gives (created, then key).
// The keys are ones st lacks, so none is a top-level post: like every
// action loaded but those, it comes without its body. The keys travel as
// one array (JSON on SQLite), so that the statement has one shape however
// many there are: a prepared statement per count would fill pgx's cache.
func (s *Store) loadKeys(ctx context.Context, tx querier, st *model.Ledger, idx map[string]int, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	var arg any = keys
	query := "SELECT " + actionCols + " FROM actions WHERE key = ANY(?)"
	if !s.pg {
		b, err := json.Marshal(keys)
		if err != nil {
			return s.wrap("read due actions", err)
		}
		arg, query = string(b), "SELECT "+actionCols+" FROM actions WHERE key IN (SELECT value FROM json_each(?))"
	}
	rows, err := tx.QueryContext(ctx, s.q(query), arg)
	if err != nil {
		return s.wrap("read due actions", err)
	}
	err = scanActions(rows, func(a model.Action) {
		if i, ok := idx[a.EpisodeID]; ok {
			a.Body = ""
			st.Open[i].Actions = insertOrdered(st.Open[i].Actions, a)
		}
	})
	return s.wrap("read due actions", err)
}

// insertOrdered puts a into actions, ordered by creation, then key; an
// action already there is not added twice.
func insertOrdered(actions []model.Action, a model.Action) []model.Action {
	i, found := slices.BinarySearchFunc(actions, a, func(b, a model.Action) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.Key, a.Key)
	})
	if found {
		return actions
	}
	return slices.Insert(actions, i, a)
}
