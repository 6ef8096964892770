package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
)

// Actors is who may act from Slack on episode e's messages: the lists of
// the route its messages take when that route sets any, else the
// defaults (slack.interactivity's).
func Actors(r model.Routing, e model.Episode) model.Actors {
	for _, rt := range r.Routes {
		if !Matches(rt.Match, e) {
			continue
		}
		if rt.AllowedUsers != nil || rt.AllowedUsergroups != nil {
			return model.Actors{Users: rt.AllowedUsers, Usergroups: rt.AllowedUsergroups}
		}
		break
	}
	return r.Allowed
}

// MayAct says whether user may act: listed by id, or a member of a listed
// user group. members holds the members of the listed groups as Slack
// answered; a group it lacks (Slack could not say) admits nobody.
func MayAct(a model.Actors, user string, members map[string][]string) bool {
	if user == "" {
		return false
	}
	if slices.Contains(a.Users, user) {
		return true
	}
	for _, g := range a.Usergroups {
		if slices.Contains(members[g], user) {
			return true
		}
	}
	return false
}

// CancelAllowed says whether a message about an episode of kind offers
// "Cancel turn and nudge": only for a turn that runs without progress,
// which kandev refuses a plain message while it runs; never while a
// person owes an answer (model.HumanOwesAnswer).
func CancelAllowed(kind model.Kind) bool {
	return model.Cancellable(kind)
}

// SnoozeFor is how long each snooze button silences.
var SnoozeFor = map[string]time.Duration{"1h": time.Hour, "4h": 4 * time.Hour}

// maxAnswerText bounds a form's free text: kandev's answer is a prompt.
const maxAnswerText = 2000

// ClickIn is what deciding a click reads besides the episode.
type ClickIn struct {
	Now time.Time
	// Finding is the episode's finding as last seen: its questions and
	// options, its permission.
	Finding scan.Finding
	// Text is the nudge text of the episode's kind (cancel_and_nudge).
	Text string
	// First is the episode's delivered first Slack message, on which the
	// click's story is told; nil when it has none.
	First *model.Action
}

// Decided is what a click becomes: the action it is and the action that
// tells its story in Slack once it settles, or why it becomes nothing.
type Decided struct {
	Click, Tell model.Action
	Refused     string
}

// Click decides what a click becomes. Its key is the episode's, the
// button's, the value's and the user's, so that a redelivered envelope, a
// retried request and a double click are one action; answering one
// question by its button or by the form with the same answer is one too.
// A click that does not fit the episode (its kind changed, an option it
// does not offer, the episode cleared) becomes nothing, and Refused says
// why for the person who clicked.
func Click(e model.Episode, c model.Click, in ClickIn) Decided {
	if !e.Open() {
		return Decided{Refused: "this alert cleared already (" + e.Resolution + ")"}
	}
	if in.First == nil || in.First.ResultTS == "" {
		return Decided{Refused: "watchdogd sent no message for this alert that it could update"}
	}
	body := model.ClickBody{Button: c.Button, User: c.User, Channel: in.First.ResultChannel, TS: in.First.ResultTS}
	kind, keyButton, keyValue, why := clickAction(e, c, in, &body)
	if why != "" {
		return Decided{Refused: why}
	}
	if done, ok := answered(e); ok && (kind == model.ActionSnooze || kind == model.ActionResolve) {
		// Its story is on the message: a snooze's, told over it from the
		// message as first sent, would put the buttons back.
		return Decided{Refused: fmt.Sprintf("%s answered this alert from Slack already (%s): it clears once kandev has it", whoClicked(done), done.Kind)}
	}
	rest := keyButton + "/" + shortHash(keyValue) + "/" + c.User
	if n := tried(e); n > 0 && slices.Contains(acting, kind) {
		rest += fmt.Sprintf("/try%d", n+1) // a new try after ones that did nothing
	}
	if other := actedBefore(e, kind, Key(e.ID, "click/"+rest)); other != "" {
		return Decided{Refused: other}
	}
	a := model.Action{Key: Key(e.ID, "click/"+rest), EpisodeID: e.ID, Seq: "click/" + rest, Kind: kind, Channel: body.Channel,
		Body: body.Encode(), CreatedAt: in.Now, NextAttempt: in.Now}
	a.Digest = Digest(a, e.Identity)
	t := model.Action{Key: Key(e.ID, "tell/"+rest), EpisodeID: e.ID, Seq: "tell/" + rest, Kind: model.ActionSlackTell, Channel: body.Channel,
		ParentKey: a.Key, CreatedAt: in.Now, NextAttempt: in.Now}
	t.Digest = Digest(t, e.Identity)
	return Decided{Click: a, Tell: t}
}

// slackID is a Slack user id, safe to mention.
var slackID = regexp.MustCompile(`^[UW][A-Z0-9]{1,20}$`)

// acting are the click actions that act on kandev for the episode: one
// of them at most, whoever clicks first.
var acting = []model.ActionKind{model.ActionAnswer, model.ActionPermission, model.ActionSendMessage, model.ActionCancelAndNudge}

// actedBefore says why a click of kind (its key key) must not act: another
// click on the episode acts already (another person, another option, the
// form after a button) and has not failed. Two answers, two permission
// responses or two messages would otherwise both go, the second settled
// as if it were the first. Empty when none did.
func actedBefore(e model.Episode, kind model.ActionKind, key string) string {
	if !slices.Contains(acting, kind) {
		return ""
	}
	for _, a := range e.Actions {
		if a.Key == key || !strings.HasPrefix(a.Seq, "click/") || !slices.Contains(acting, a.Kind) ||
			a.State == model.StateFailed || a.State == model.StateSuperseded {
			continue
		}
		return fmt.Sprintf("%s acted on this alert from Slack already (%s); the message says how once kandev has it", whoClicked(a), a.Kind)
	}
	return ""
}

// answered is the click on e that answered its question or permission in
// kandev, delivered, if any: the finding then clears with the next scan.
// (A message sent for a hidden question, or a cancel, may leave it open.)
func answered(e model.Episode) (model.Action, bool) {
	for _, a := range e.Actions {
		if strings.HasPrefix(a.Seq, "click/") && (a.Kind == model.ActionAnswer || a.Kind == model.ActionPermission) &&
			a.State == model.StateDelivered {
			return a, true
		}
	}
	return model.Action{}, false
}

// whoClicked names who made click a, as a Slack mention when its user is
// a Slack id, else "someone".
func whoClicked(a model.Action) string {
	b, _ := model.DecodeClick(a.Body)
	if slackID.MatchString(b.User) {
		return "<@" + b.User + ">"
	}
	return "someone"
}

// tried counts the clicks on e that were to act on kandev and did
// nothing: failed (kandev could not be reached, or refused) or superseded
// (the finding moved on), never having possibly landed. A click made
// again after one — "click again", the failure says — is a new action,
// where its first key is settled for good; a double click before then is
// still one. A failure that may have landed (a permission whose reply was
// lost, say) is not counted: the same click again stays that action.
func tried(e model.Episode) int {
	n := 0
	for _, a := range e.Actions {
		if strings.HasPrefix(a.Seq, "click/") && slices.Contains(acting, a.Kind) && !a.Uncertain &&
			(a.State == model.StateFailed || a.State == model.StateSuperseded) {
			n++
		}
	}
	return n
}

// clickAction is the action kind a click takes and the button and value
// its key is made of, filling in its body; or why it fits nothing.
func clickAction(e model.Episode, c model.Click, in ClickIn, b *model.ClickBody) (kind model.ActionKind, button, value, why string) {
	d := in.Finding.Detail
	if d == nil {
		d = &scan.Detail{}
	}
	switch c.Button {
	case model.ButtonAnswer, model.ButtonAnswers:
		if e.Kind != model.KindUnansweredClarification {
			return "", "", "", notAnswerable(e.Kind)
		}
		what, why := answers(d.Questions, c.Answers, true)
		if why != "" {
			return "", "", "", why
		}
		b.PendingID, b.Answers, b.What, b.Prints = e.PendingID, c.Answers, what, c.Prints
		return model.ActionAnswer, model.ButtonAnswer, canonical(c.Answers), ""
	case model.ButtonSendMessage:
		if e.Kind != model.KindShadowedClarification {
			return "", "", "", "kandev shows this question again: answer it with its own buttons"
		}
		what, why := answers(d.Questions, c.Answers, false)
		if why != "" {
			return "", "", "", why
		}
		b.What, b.Text, b.Prints = what, sentAnswer(d.Questions, c.Answers), c.Prints
		return model.ActionSendMessage, c.Button, canonical(c.Answers), ""
	case model.ButtonPermission:
		if e.Kind != model.KindPendingPermission || d.PermissionRequestID == "" {
			return "", "", "", "this alert is not a permission kandev can be answered from here"
		}
		i := slices.IndexFunc(d.PermissionOptions, func(o scan.PermissionOption) bool { return o.ID == c.Value })
		if i < 0 {
			return "", "", "", "kandev's permission request offers no such option"
		}
		o := d.PermissionOptions[i]
		b.PendingID, b.RequestID, b.OptionID, b.OptionKind, b.What, b.Prints = e.PendingID, d.PermissionRequestID, c.Value, o.Kind, o.Name, c.Prints
		return model.ActionPermission, c.Button, c.Value, ""
	case model.ButtonCancelAndNudge:
		if !CancelAllowed(e.Kind) {
			return "", "", "", "this alert's turn is not one to cancel"
		}
		b.Text = in.Text
		return model.ActionCancelAndNudge, c.Button, "", ""
	case model.ButtonSnooze:
		d, ok := SnoozeFor[c.Value]
		if !ok {
			return "", "", "", "a snooze is for 1h or 4h"
		}
		b.What, b.Until = c.Value, in.Now.Add(d)
		// Each snooze that went through makes the next click a new one:
		// a snooze again after the first ran out silences again. A
		// redelivered click, before its snooze is delivered, is the same.
		done := 0
		for _, a := range e.Actions {
			if a.Kind == model.ActionSnooze && a.State == model.StateDelivered {
				done++
			}
		}
		return model.ActionSnooze, c.Button, fmt.Sprintf("%s#%d", c.Value, done), ""
	case model.ButtonResolve:
		return model.ActionResolve, c.Button, "", ""
	}
	return "", "", "", "watchdogd does not know this button"
}

// notAnswerable says why a question of kind k takes no answer from Slack.
func notAnswerable(k model.Kind) string {
	if k == model.KindShadowedClarification {
		return "kandev hides this question now and refuses its answer; send your answer as a message instead"
	}
	return "this alert is not a question"
}

// answers checks a click's answers against the bundle's questions: for an
// answer, exactly one per question (kandev's rule), each an option the
// question offers or a text; for a message, one option of one question. It
// returns them in words ("pgx"; "One day; cookie").
func answers(qs []scan.Question, as []model.Answer, all bool) (string, string) {
	if len(qs) == 0 {
		return "", "kandev's question is not known to watchdogd any more"
	}
	if all && len(as) != len(qs) || !all && len(as) != 1 {
		return "", fmt.Sprintf("kandev wants exactly one answer per question (%d)", len(qs))
	}
	var words []string
	seen := map[string]bool{}
	for _, a := range as {
		i := slices.IndexFunc(qs, func(q scan.Question) bool { return q.ID == a.QuestionID })
		if i < 0 || seen[a.QuestionID] {
			return "", "the answer names a question the bundle does not hold, or one twice"
		}
		seen[a.QuestionID] = true
		if utf8.RuneCountInString(a.Text) > maxAnswerText || len(a.Options) > 1 || len(a.Options) == 0 && strings.TrimSpace(a.Text) == "" {
			return "", "each question takes one option or a text (of at most 2000 characters)"
		}
		var w []string
		for _, o := range a.Options {
			j := slices.IndexFunc(qs[i].Options, func(x scan.Option) bool { return x.ID == o })
			if j < 0 {
				return "", "kandev's question offers no such option"
			}
			w = append(w, qs[i].Options[j].Label)
		}
		if t := strings.TrimSpace(a.Text); t != "" {
			w = append(w, "“"+t+"”")
		}
		words = append(words, strings.Join(w, " "))
	}
	return strings.Join(words, "; "), ""
}

// sentAnswer is the user message a hidden question's answer goes as.
func sentAnswer(qs []scan.Question, as []model.Answer) string {
	a := as[0]
	q := qs[slices.IndexFunc(qs, func(q scan.Question) bool { return q.ID == a.QuestionID })]
	label := ""
	for _, o := range q.Options {
		if len(a.Options) > 0 && o.ID == a.Options[0] {
			label = o.Label
		}
	}
	title := strings.TrimSpace(q.Title + " " + q.Prompt)
	return fmt.Sprintf("Answer to your question %q: %s", title, label)
}

// canonical is answers as one string, the same for the same answers in
// any order.
func canonical(as []model.Answer) string {
	sorted := slices.Clone(as)
	slices.SortFunc(sorted, func(a, b model.Answer) int { return strings.Compare(a.QuestionID, b.QuestionID) })
	b, _ := json.Marshal(sorted) // strings only
	return string(b)
}

// shortHash names a value inside a seq: the value is agent-written (an
// option id) or long (a form's answers).
func shortHash(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:6])
}

// Told says whether episode e's first message already tells how it ended:
// a click that acted (answered, granted, sent, cancelled, resolved) was
// delivered, and its story edits the message. A resolve then does not
// edit it again.
func Told(e model.Episode) bool {
	for _, a := range e.Actions {
		if strings.HasPrefix(a.Seq, "click/") && a.Kind != model.ActionSnooze && a.State == model.StateDelivered {
			return true
		}
	}
	return false
}

// ClearSilence is a silence kept until its finding clears (a resolve
// from Slack): its session's finding of its kind, or the finding of the
// episode resolved (Identity), whatever kind that turns to.
type ClearSilence struct {
	ID        string
	SessionID string
	Kind      model.Kind
	Identity  string
}

// covers says whether the silence holds finding f.
func (c ClearSilence) covers(f scan.Finding) bool {
	if f.SessionID != c.SessionID {
		return false
	}
	return f.Kind == c.Kind || (c.Identity != "" && Identity(f) == c.Identity)
}

// Cleared names the silences of s whose finding no scan reports any more:
// they end, and the next finding of that session and kind is announced.
func Cleared(s []ClearSilence, findings []scan.Finding) []string {
	var out []string
	for _, c := range s {
		if !slices.ContainsFunc(findings, c.covers) {
			out = append(out, c.ID)
		}
	}
	return out
}

// Unresolved is findings without those a person resolved from Slack: a
// silence kept until the finding clears (held) covers them. Such a
// finding opens no episode — no outlet, paced or not, hears of it again —
// until it clears and its silence ends.
func Unresolved(findings []scan.Finding, held []ClearSilence) []scan.Finding {
	if len(held) == 0 {
		return findings
	}
	return slices.DeleteFunc(slices.Clone(findings), func(f scan.Finding) bool {
		return slices.ContainsFunc(held, func(c ClearSilence) bool { return c.covers(f) })
	})
}
