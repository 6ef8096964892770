package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Print writes the table, then one summary line per dialect for the largest
// size measured: scan/floor, naive/scan, history2x, rss_mib.
func Print(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tdialect\tsessions\tactive\tturns\tmessages\tscan\tstatements\tfloor\tnaive\tqueries\tper query\tscan/floor\tstmts/floor\tnaive/scan\thistory2x\tfloor+open\t+open/floor\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%.2f\t%.2f\t%.1f\t%.2f\t%s\t%.2f\t\n", r.Size, r.Dialect, r.Sessions, r.Active, r.Turns, r.Messages,
			ms(r.Scan), ms(r.Statements), ms(r.Floor), ms(r.Naive), r.NaiveQueries, us(r.Naive/time.Duration(max(r.NaiveQueries, 1))),
			ratio(r.Scan, r.Floor), ratio(r.Statements, r.Floor), ratio(r.Naive, r.Scan), ratio(r.ScanHistory2, r.ScanHistory1),
			ms(r.FloorOpen), ratio(r.FloorOpen, r.Floor))
	}
	_ = tw.Flush()
	printNetwork(w, results)
	last := map[string]Result{}
	var order []string
	for _, r := range results {
		if _, ok := last[r.Dialect]; !ok {
			order = append(order, r.Dialect)
		}
		last[r.Dialect] = r
	}
	fmt.Fprintln(w)
	for _, d := range order {
		r := last[d]
		fmt.Fprintf(w, "%s scan/floor=%.2f naive/scan=%.1f history2x=%.2f rss_mib=%.0f\n", d,
			ratio(r.Scan, r.Floor), ratio(r.Naive, r.Scan), ratio(r.ScanHistory2, r.ScanHistory1), r.RSSMiB)
	}
}

// printNetwork writes the figures through a link, if any were measured:
// each side's time and round trips, what a round trip really cost (the
// naive loop's time over its round trips: the link's delay, its own
// overhead and the server's work), and what that made of the naive loop's
// lead.
func printNetwork(w io.Writer, results []Result) {
	var rows []Result
	for _, r := range results {
		if r.Network != nil {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nthrough a link adding %v to every round trip:\n", rows[0].Network.RTT)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tdialect\tactive\tscan\tround trips\tnaive\tround trips\tper round trip\tnaive/scan\t")
	for _, r := range rows {
		n := r.Network
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%d\t%s\t%.1f\t\n", r.Size, r.Dialect, r.Active,
			ms(n.Scan), n.ScanTrips, ms(n.Naive), n.NaiveTrips, us(n.Naive/time.Duration(max(n.NaiveTrips, 1))), ratio(n.Naive, n.Scan))
	}
	_ = tw.Flush()
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond)) }
