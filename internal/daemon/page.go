package daemon

import (
	"html/template"
	"time"

	"github.com/watchdogd/watchdogd/internal/model"
	"github.com/watchdogd/watchdogd/internal/scan"
	"github.com/watchdogd/watchdogd/internal/term"
)

// pageTemplate is the status page: rendered on the server, refreshing
// itself, readable on a phone (rows become cards on narrow screens).
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"age":       func(s int64) string { return scan.HumanAge(time.Duration(s) * time.Second) },
	"kindWords": kindWords,
	"label":     term.TitleLabel,
	"clock":     clock,
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="30">
<title>watchdogd{{if .ScanFailing}} · scan failing{{end}}{{if .Total}} ({{.Total}}){{end}}</title>
<style>
body{font:15px/1.4 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d1d1f;background:#f6f7f9}
header{background:#20232a;color:#fff;padding:12px 16px}header h1{font-size:18px;margin:0}
header p{margin:4px 0 0;color:#c9cdd4;font-size:13px}.bad{color:#ffb4a9}.more{color:#667;padding:8px 0}
main{padding:12px 16px}table{border-collapse:collapse;width:100%;background:#fff;border-radius:8px;overflow:hidden}
th,td{text-align:left;padding:8px 10px;border-bottom:1px solid #e6e8eb;vertical-align:top}th{font-size:12px;text-transform:uppercase;color:#667}
td.age{font-variant-numeric:tabular-nums;white-space:nowrap;font-weight:600}.kind{white-space:nowrap}
.muted{color:#889}.tag{display:inline-block;padding:1px 6px;border-radius:4px;background:#eef;font-size:12px}
.silenced{background:#eee;color:#666}.empty{padding:32px;text-align:center;color:#667}
.failing{background:#ffe3de;border-radius:8px;padding:10px 12px;margin:0 0 8px}.closed{background:#fff4f2;border-radius:8px;padding:8px 10px;margin:0 0 8px}.bad-tag{background:#ffd8d2}
a{color:#0b5cad}code{font-size:12px}
@media (max-width:640px){thead{display:none}tr{display:block;border-bottom:8px solid #f6f7f9}
td{display:block;border:0;padding:4px 12px}td::before{content:attr(data-label) ": ";color:#889;font-size:12px}}
</style></head><body>
<header><h1>watchdogd</h1>
<p>{{.Total}} open · {{.Sessions}} active sessions · last scan {{clock .LastScan}} · {{.Role}}{{if .Failing}} · <span class="bad">{{.Failing}}</span>{{else if .LastError}} · <span class="bad">error: {{.LastError}}</span>{{end}}</p>
{{if .Kinds}}<p class="kinds">{{range $i, $k := .Kinds}}{{if $i}} · {{end}}{{kindWords $k.Kind}}: {{$k.N}}{{end}}</p>{{end}}</header>
<main>{{if .ScanFailing}}<p class="failing" id="scan-failing"><b>The scan is failing</b>: kandev's database is not being read, so no
new problem is found and none clears. {{if .Total}}What is shown is as of the last successful scan ({{clock .LastScan}}).{{end}}</p>
{{end}}{{range .Closed}}<p class="closed"><span class="tag bad-tag">{{.State}}</span> {{.Outlet}} <b>{{.Name}}</b>: {{.Why}}</p>
{{end}}{{if .Episodes}}
<table><thead><tr><th>Age</th><th>Kind</th><th>Task</th><th>Session</th><th>Last action</th><th>Silenced</th></tr></thead><tbody>
{{range .Episodes}}<tr class="episode" data-kind="{{.Kind}}">
<td class="age" data-label="Age">{{age .AgeSeconds}}</td>
<td class="kind" data-label="Kind"><span class="tag">{{kindWords .Kind}}</span></td>
<td data-label="Task"><a href="{{.Link}}">{{label .TaskTitle .TaskID}}</a></td>
<td data-label="Session"><code>{{.SessionID}}</code></td>
<td data-label="Last action">{{with .LastAction}}{{.Action}} {{.State}}{{if .Channel}} in {{.Channel}}{{end}} <time class="muted" datetime="{{.At}}">{{clock .At}}</time>{{if .Error}}<br><span class="muted">{{.Error}}</span>{{end}}{{else}}<span class="muted">none yet</span>{{end}}</td>
<td data-label="Silenced">{{if .Silenced}}<span class="tag silenced">silenced</span>{{else}}no{{end}}</td>
</tr>{{end}}</tbody></table>
{{if gt .Total (len .Episodes)}}<p class="more">The {{len .Episodes}} oldest of {{.Total}} are shown; <a href="api/v1/findings">/api/v1/findings</a> lists {{if gt .Total .Listed}}the {{.Listed}} oldest, <code>watchdogd episodes list --open</code> all{{else}}them all{{end}}.</p>{{end}}
{{else if .ScanFailing}}<p class="empty">Nothing open in the ledger, but kandev's sessions are not being watched: the scan is failing (above).</p>
{{else if .Failing}}<p class="empty">Nothing open; the last cycle failed (above).</p>
{{else}}<p class="empty">Nothing open. Every active session looks healthy.</p>{{end}}</main>
</body></html>
`))

// pageData is what the status page shows.
type pageData struct {
	// Episodes are the oldest open episodes, at most pageRows of them.
	Episodes []episodeView
	// Total counts every open episode, Listed those the API lists; Kinds
	// counts them all by kind.
	Total     int
	Listed    int
	Kinds     []kindCount
	Sessions  int
	LastScan  string
	LastError string
	// Failing is the run of failed cycles in words ("" after a cycle
	// that succeeded); ScanFailing says kandev is not being read.
	Failing     string
	ScanFailing bool
	Role        string
	// Closed are the destinations nothing is sent to.
	Closed []closedView
}

type kindCount struct {
	Kind model.Kind
	N    int
}

// pageRows bounds the page's table. In a storm (a kandev restart parks
// thousands of sessions at once) the page would otherwise weigh megabytes
// and be fetched again every 30 s, on a phone at 3 a.m.; the oldest are
// the ones to read first, the counts by kind say what the rest are, and
// /api/v1/findings lists more.
const pageRows = 500

// clock is an RFC 3339 instant as people read it on the page, to the
// second in UTC (the API keeps the full value); other text as it is.
func clock(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}
