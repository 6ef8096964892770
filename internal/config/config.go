// Package config reads watchdogd's one YAML file strictly: unknown keys are
// errors, every problem is reported at once as "file:line: field: problem",
// everything but secrets has a default, and the result is validated before
// anything uses it. Secrets (tokens, database URLs with passwords) come only
// from files or the environment and are never echoed.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Config is a validated configuration. The zero value is not valid; use
// Load, Parse or Default.
type Config struct {
	Database     Database                     `yaml:"database"`
	CycleTimeout time.Duration                `yaml:"cycle_timeout"`
	Kandev       Kandev                       `yaml:"kandev"`
	Schedule     string                       `yaml:"schedule"`
	Thresholds   Thresholds                   `yaml:"thresholds"`
	Policy       map[model.Kind]*model.Policy `yaml:"policy"`
	State        State                        `yaml:"state"`
	Slack        *Slack                       `yaml:"slack"`
	Alertmanager *Alertmanager                `yaml:"alertmanager"`
	Webhooks     []Webhook                    `yaml:"webhooks"`
	Silences     []Silence                    `yaml:"silences"`
	QuietHours   *model.QuietHours            `yaml:"quiet_hours"`
	HA           HA                           `yaml:"ha"`
	HTTP         HTTP                         `yaml:"http"`
	Metrics      Metrics                      `yaml:"metrics"`
	Log          Log                          `yaml:"log"`

	// File is where the config came from ("" for defaults).
	File string `yaml:"-"`

	warnings []string
	// lines maps the fields the file sets ("state.url") to their lines.
	lines map[string]int
}

// Database is kandev's database.
type Database struct {
	URL         string        `yaml:"url"`
	URLFile     string        `yaml:"url_file"`
	ScanTimeout time.Duration `yaml:"scan_timeout"`
	// BusyTimeout is how long a SQLite read waits on kandev's locks.
	BusyTimeout time.Duration `yaml:"busy_timeout"`
}

// Kandev is how watchdogd reaches kandev.
type Kandev struct {
	BaseURL         string `yaml:"base_url"`
	TokenFile       string `yaml:"token_file"`
	CurrentTurnRule string `yaml:"current_turn_rule"`
	// Timeout bounds each request to kandev's API: a nudge, a cancel, an
	// answer or a permission from Slack.
	Timeout time.Duration `yaml:"timeout"`
}

// Thresholds are the finding thresholds (docs/architecture.md, "Findings").
type Thresholds struct {
	StallAfter         time.Duration `yaml:"stall_after"`
	NeverStartedAfter  time.Duration `yaml:"never_started_after"`
	ClarificationAfter time.Duration `yaml:"clarification_after"`
	PermissionAfter    time.Duration `yaml:"permission_after"`
	InterruptedAfter   time.Duration `yaml:"interrupted_after"`
	// FutureTolerance is how far after the scan a kandev timestamp may lie
	// and still be taken as true (clocks differ a little); one further
	// ahead is read as missing and named, like an unparseable one.
	FutureTolerance time.Duration `yaml:"future_tolerance"`
}

// State is watchdogd's own ledger store.
type State struct {
	URL       string        `yaml:"url"`
	URLFile   string        `yaml:"url_file"`
	ClaimTTL  time.Duration `yaml:"claim_ttl"`
	Retention time.Duration `yaml:"retention"`
}

// Slack is the Slack notifier.
type Slack struct {
	TokenFile           string        `yaml:"token_file"`
	APIURL              string        `yaml:"api_url"`
	Timeout             time.Duration `yaml:"timeout"`
	DefaultChannel      string        `yaml:"default_channel"`
	DefaultMention      string        `yaml:"default_mention"`
	Routes              []model.Route `yaml:"routes"`
	MaxMessagesPerCycle int           `yaml:"max_messages_per_cycle"`
	// Interactivity, when set, puts buttons on the messages and receives
	// their clicks; nil: no buttons and no connection.
	Interactivity *Interactivity `yaml:"interactivity"`
}

// Interactivity is how watchdogd receives clicks on its Slack messages, and
// who may act on messages no route with its own lists sent.
type Interactivity struct {
	// Mode is socket (an outbound WebSocket: Socket Mode) or http (Slack
	// POSTs to Listen).
	Mode string `yaml:"mode"`
	// AppTokenFile holds the app-level token (xapp-…) Socket Mode
	// connects with; env WATCHDOGD_SLACK_APP_TOKEN overrides it.
	AppTokenFile string `yaml:"app_token_file"`
	// SigningSecretFile holds the secret Slack signs its HTTP requests
	// with; env WATCHDOGD_SLACK_SIGNING_SECRET overrides it.
	SigningSecretFile string `yaml:"signing_secret_file"`
	// Listen is the HTTP mode's own listener (POST /slack/interactions).
	Listen            string   `yaml:"listen"`
	AllowedUsers      []string `yaml:"allowed_users"`
	AllowedUsergroups []string `yaml:"allowed_usergroups"`
}

// The interactivity modes.
const (
	ModeSocket = "socket"
	ModeHTTP   = "http"
)

// Silence mutes (defers) matching episodes until a time. It matches with
// Alertmanager's matchers (matchers: ['kind="stalled_turn"',
// 'workspace_id=~"ws-.*"']), with an equality match: as routes spell it,
// or both: every condition must hold.
type Silence struct {
	Match    model.Match     `yaml:"match"`
	Matchers []model.Matcher `yaml:"matchers"`
	Until    Timestamp       `yaml:"until"`
	Comment  string          `yaml:"comment"`
}

// All is the silence's match: and matchers: together, as one list.
func (s Silence) All() model.Matchers {
	return append(model.FromMatch(s.Match), s.Matchers...)
}

// HA is the leader lease.
type HA struct {
	Enabled  bool          `yaml:"enabled"`
	LeaseTTL time.Duration `yaml:"lease_ttl"`
}

// HTTP is the metrics, probes and status page listener.
type HTTP struct {
	Listen string `yaml:"listen"`
	// ExternalURL is where people reach this watchdogd (its status
	// page), for alerts' generatorURL.
	ExternalURL   string `yaml:"external_url"`
	WebConfigFile string `yaml:"web_config_file"`
	UI            *bool  `yaml:"ui"`
	PProf         bool   `yaml:"pprof"`
}

// Log is logging.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Default is the configuration with no file at all.
func Default() *Config {
	c := &Config{}
	applyDefaults(c)
	return c
}

// Load reads, defaults and validates a config file. getenv answers whether
// secret sources given by environment variables are set.
func Load(path string, getenv func(string) string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, b, getenv)
}

// Parse reads, defaults and validates config text; name is used in errors.
// Every problem is reported at once, as *Problems. A panic in a library
// reading part of the file is a problem too, never a crash: the daemon
// parses a file again on reload, with its old config still running.
func Parse(name string, b []byte, getenv func(string) string) (*Config, error) {
	return parse(name, b, &decoder{lines: map[string]int{}, getenv: getenv})
}

func parse(name string, b []byte, d *decoder) (cfg *Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, d.panicked(name, r)
		}
	}()
	c := &Config{File: name}
	if len(bytes.TrimSpace(b)) > 0 {
		var root yaml.Node
		dec := yaml.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&root); err != nil {
			return nil, &Problems{File: name, Items: []Problem{{Line: yamlErrLine(err), Field: "(syntax)", Msg: oneLine(yamlErrMsg(err))}}}
		}
		if len(root.Content) > 0 {
			d.nodes = countNodes(&root)
			d.decode(root.Content[0], reflect.ValueOf(c).Elem(), "")
		}
		if d.overBudget { // decoded in part: validating it would say little true
			return nil, d.sorted(name)
		}
		secondDocument(dec, d)
	}
	explicitZeros(c, d)
	applyDefaults(c)
	validate(c, d)
	if len(d.problems) > 0 {
		return nil, d.sorted(name)
	}
	ladderWarnings(c, d)
	c.lines = d.lines
	sort.SliceStable(d.warnings, func(i, j int) bool { return d.warnings[i].Line < d.warnings[j].Line })
	c.warnings = (&Problems{File: name, Items: d.warnings}).Lines()
	return c, nil
}

// sorted is the problems found, in the file's order.
func (d *decoder) sorted(name string) *Problems {
	sort.SliceStable(d.problems, func(i, j int) bool { return d.problems[i].Line < d.problems[j].Line })
	return &Problems{File: name, Items: d.problems}
}

// panicked is the problem a panic while reading the file becomes: at the
// line of the node being decoded when it came, or else the top of the
// file, so that it reads "file:line: …" like every other problem.
func (d *decoder) panicked(name string, r any) *Problems {
	line := d.at
	if line < 1 {
		line = 1
	}
	return &Problems{File: name, Items: []Problem{{Line: line, Field: "(file)", Msg: oneLine(fmt.Sprintf("cannot be read: %v", r))}}}
}

// secondDocument refuses a second YAML document after "---": the decoder
// would read the first and silently drop the rest (two files concatenated,
// a Kubernetes manifest pasted in), and a key set there would do nothing.
func secondDocument(dec *yaml.Decoder, d *decoder) {
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		d.add(yamlErrLine(err), "(syntax)", "%s", yamlErrMsg(err))
	case len(next.Content) > 0 && (next.Content[0].Kind != yaml.ScalarNode || next.Content[0].Tag != "!!null"):
		d.add(next.Content[0].Line, "(document)", "a second YAML document; watchdogd reads one per file")
	}
}
