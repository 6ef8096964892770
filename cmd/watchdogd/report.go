package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kingpin/v2"
	promodel "github.com/prometheus/common/model"

	"github.com/watchdogd/watchdogd/internal/app"
	"github.com/watchdogd/watchdogd/internal/ledger"
	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/report"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// reportCmd is `watchdogd report`: how much agent time was lost, and
// where, over a window of the ledger's history (internal/report).
type reportCmd struct {
	ledgerFlag
	outputFlag
	since, until string
	window       time.Duration
	// end is --until as an instant; zero: now. ago is --until as a
	// duration before now.
	end time.Time
	ago time.Duration
}

func (c *reportCmd) define(k *kingpin.CmdClause) {
	c.ledgerFlag.define(k)
	c.outputFlag.define(k)
	k.Flag("since", "how far back the window reaches from its end, as Prometheus writes durations (90m, 24h, 7d, 2w)").
		Default("7d").StringVar(&c.since)
	k.Flag("until", "the window's end: an RFC 3339 time, or a duration before now (1d); default now").
		PlaceHolder("TIME").StringVar(&c.until)
}

func (c *reportCmd) check(e proc) error {
	if err := c.resolve(e); err != nil {
		return err
	}
	d, err := promodel.ParseDuration(c.since)
	if err != nil || d <= 0 {
		return usageError(fmt.Sprintf("--since %q: want a duration like 24h, 7d or 2w", c.since))
	}
	c.window = time.Duration(d)
	if c.until != "" {
		if t, err := time.Parse(time.RFC3339, c.until); err == nil {
			c.end = t
		} else if d, err := promodel.ParseDuration(c.until); err == nil {
			c.ago = time.Duration(d)
		} else {
			return usageError(fmt.Sprintf("--until %q: want an RFC 3339 time (2026-11-29T12:00:00Z) or a duration before now (1d)", c.until))
		}
	}
	return c.outputFlag.check()
}

func (c *reportCmd) run(ctx context.Context, e proc) error {
	cfg, st, err := app.OpenLedger(ctx, inputs(c.config, "", e))
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	now := e.now()
	until := c.end
	if until.IsZero() {
		until = now.Add(-c.ago)
	}
	from := until.Add(-c.window)
	eps, truncated, err := st.ReportEpisodes(ctx, from, until, ledger.ReportLimit)
	if err != nil {
		return err
	}
	r := report.Compute(report.Input{Episodes: eps, From: from, Until: until, Now: now, Retention: cfg.State.Retention, Truncated: truncated})
	if c.output == "json" {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	return writeReport(e.stdout, r)
}

// writeReport prints a report for people: the window and what the data
// covers, the lost and owed time, a line per kind, the top workspaces and
// tasks, and a line per day. (Per hour is the JSON's.)
func writeReport(w io.Writer, r report.Report) error {
	from, until := parseStamp(r.Window.From), parseStamp(r.Window.Until)
	fmt.Fprintf(w, "From %s to %s (%s).\n", shortTime(from), shortTime(until), scan.HumanAge(until.Sub(from)))
	switch {
	case r.Covers.Truncated:
		fmt.Fprintf(w, "More episodes than one report reads (%d): this covers those opened since %s.\n", ledger.ReportLimit, shortTime(parseStamp(r.Covers.From)))
	case !r.Covers.Complete:
		fmt.Fprintf(w, "The ledger keeps %s (state.retention): this covers %s to %s.\n",
			scan.HumanAge(time.Duration(r.Covers.RetentionSeconds)*time.Second), shortTime(parseStamp(r.Covers.From)), shortTime(until))
	}
	fmt.Fprintf(w, "Agent time lost: %s (stalled, never started or parked by a restart; each session's overlaps once).\n", secs(r.AgentTimeLostSeconds))
	fmt.Fprintf(w, "Human-owed time: %s (questions and permissions waiting on a person).\n\n", secs(r.HumanOwedSeconds))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tOPENED\tCLEARED\tSTILL OPEN\tMEDIAN\tP90\tCLEARED BY")
	for _, k := range r.Kinds {
		median, p90 := "-", "-"
		if k.TimeToClear != nil {
			median, p90 = secs(k.TimeToClear.Median), secs(k.TimeToClear.P90)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", k.Kind, k.Opened, k.Cleared, k.StillOpen, median, p90, clearedBy(k.ClearedBy))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "WORKSPACE\tAGENT TIME LOST\tHUMAN-OWED\tEPISODES")
	for _, ws := range r.TopWorkspaces {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", term.Escape(ws.WorkspaceID), secs(ws.AgentTimeLostSeconds), secs(ws.HumanOwedSeconds), ws.Episodes)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "TASK\tWORKSPACE\tAGENT TIME LOST\tHUMAN-OWED\tEPISODES")
	for _, t := range r.TopTasks {
		fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%d\n", term.Escape(clipRunes(t.TaskTitle, 50)), term.Escape(t.TaskID), term.Escape(t.WorkspaceID),
			secs(t.AgentTimeLostSeconds), secs(t.HumanOwedSeconds), t.Episodes)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "DAY (UTC)\tOPENED\tCLEARED\tAGENT TIME LOST\tHUMAN-OWED")
	for _, d := range r.Days {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", d.Day, total(d.Opened), total(d.Cleared), secs(d.AgentTimeLostSeconds), secs(d.HumanOwedSeconds))
	}
	return tw.Flush()
}

// clearedBy is a kind's codes with their counts, the most first.
func clearedBy(by map[model.Cleared]int) string {
	codes := make([]model.Cleared, 0, len(by))
	for c := range by {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		if by[codes[i]] != by[codes[j]] {
			return by[codes[i]] > by[codes[j]]
		}
		return codes[i] < codes[j]
	})
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s %d", c, by[c])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func total(m map[model.Kind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func secs(s int64) string { return scan.HumanAge(time.Duration(s) * time.Second) }

func parseStamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func shortTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
