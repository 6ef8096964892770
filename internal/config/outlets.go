package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/watchdogd/watchdogd/internal/model"
)

// Alertmanager sends each open episode to Alertmanager as an alert.
type Alertmanager struct {
	// URLs are Alertmanagers' base URLs; every alert goes to all of them
	// (a cluster's members), at <url>/api/v2/alerts.
	URLs       []string          `yaml:"urls"`
	HTTPConfig HTTPClient        `yaml:"http_config"`
	Labels     map[string]string `yaml:"labels"`
	// Severity is each kind's severity label; a kind not named is
	// "warning".
	Severity map[model.Kind]string `yaml:"severity"`
	// ResendInterval is how often every open episode's alert is sent
	// again: Alertmanager resolves an alert it stops hearing about after
	// its resolve_timeout (5m by default).
	ResendInterval time.Duration `yaml:"resend_interval"`
	Timeout        time.Duration `yaml:"timeout"`
	// RunbookURL is every alert's runbook_url: what each finding means
	// and what to do.
	RunbookURL string `yaml:"runbook_url"`
}

// SeverityOf is kind's severity label.
func (a *Alertmanager) SeverityOf(kind model.Kind) string {
	if s := a.Severity[kind]; s != "" {
		return s
	}
	return "warning"
}

// HTTPClient is how watchdogd authenticates to a service: the parts of
// Prometheus' http_config it takes. Secrets come from files only.
type HTTPClient struct {
	BasicAuth     *BasicAuth     `yaml:"basic_auth"`
	Authorization *Authorization `yaml:"authorization"`
	TLSConfig     TLSConfig      `yaml:"tls_config"`
	ProxyURL      string         `yaml:"proxy_url"`
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	Username     string `yaml:"username"`
	UsernameFile string `yaml:"username_file"`
	PasswordFile string `yaml:"password_file"`
}

// Authorization is an Authorization header: its type (Bearer by default)
// and credentials read from a file.
type Authorization struct {
	Type            string `yaml:"type"`
	CredentialsFile string `yaml:"credentials_file"`
}

// TLSConfig is how the server's certificate is checked, and the client's.
type TLSConfig struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// Common is h as Prometheus' client library takes it.
func (h HTTPClient) Common() commoncfg.HTTPClientConfig {
	c := commoncfg.DefaultHTTPClientConfig
	// A redirect would be followed as a GET without the alerts, answered
	// 200, and taken for delivered; and it would carry the credentials.
	c.FollowRedirects = false
	if b := h.BasicAuth; b != nil {
		c.BasicAuth = &commoncfg.BasicAuth{Username: b.Username, UsernameFile: b.UsernameFile, PasswordFile: b.PasswordFile}
	}
	if a := h.Authorization; a != nil {
		c.Authorization = &commoncfg.Authorization{Type: a.Type, CredentialsFile: a.CredentialsFile}
	}
	c.TLSConfig = commoncfg.TLSConfig{CAFile: h.TLSConfig.CAFile, CertFile: h.TLSConfig.CertFile, KeyFile: h.TLSConfig.KeyFile,
		ServerName: h.TLSConfig.ServerName, InsecureSkipVerify: h.TLSConfig.InsecureSkipVerify}
	if h.ProxyURL != "" {
		if u, err := url.Parse(h.ProxyURL); err == nil {
			c.ProxyURL = commoncfg.URL{URL: u}
		}
	}
	return c
}

// OutletFiles are the files the outlets read, each as its field and path
// (for check-config: a file that cannot be read fails every send).
func (c *Config) OutletFiles() [][2]string {
	var out [][2]string
	add := func(field, path string) {
		if path != "" {
			out = append(out, [2]string{field, path})
		}
	}
	if a := c.Alertmanager; a != nil {
		h, p := a.HTTPConfig, "alertmanager.http_config."
		if b := h.BasicAuth; b != nil {
			add(p+"basic_auth.username_file", b.UsernameFile)
			add(p+"basic_auth.password_file", b.PasswordFile)
		}
		if au := h.Authorization; au != nil {
			add(p+"authorization.credentials_file", au.CredentialsFile)
		}
		add(p+"tls_config.ca_file", h.TLSConfig.CAFile)
		add(p+"tls_config.cert_file", h.TLSConfig.CertFile)
		add(p+"tls_config.key_file", h.TLSConfig.KeyFile)
	}
	for i, w := range c.Webhooks {
		add(fmt.Sprintf("webhooks[%d].secret_file", i), w.SecretFile)
	}
	return out
}

// Webhook posts steps and resolves, signed, to a URL.
type Webhook struct {
	Name string `yaml:"name"`
	URL  string `yaml:"url"`
	// SecretFile holds the signing secret: a Standard Webhooks secret,
	// whsec_ and the key in base64.
	SecretFile string        `yaml:"secret_file"`
	Timeout    time.Duration `yaml:"timeout"`
}

func defaultOutlets(c *Config) {
	if a := c.Alertmanager; a != nil {
		setDur(&a.ResendInterval, time.Minute)
		setDur(&a.Timeout, 10*time.Second)
		setStr(&a.RunbookURL, "https://github.com/watchdogd/watchdogd/blob/main/docs/runbook.md#what-a-finding-means-and-what-to-do")
	}
	for i := range c.Webhooks {
		setDur(&c.Webhooks[i].Timeout, 10*time.Second)
	}
	if len(c.Webhooks) != 1 {
		return
	}
	for _, p := range c.Policy { // one webhook: a webhook step need not name it
		for i, s := range p.Steps {
			if s.Action == model.ActionWebhook && s.Webhook == "" {
				p.Steps[i].Webhook = c.Webhooks[0].Name
			}
		}
	}
}

// reservedLabels are the labels watchdogd sets on every alert.
var reservedLabels = []string{"alertname", "kind", "episode_id", "session_id", "task_id", "workspace_id", "severity"}

var (
	labelNameRE   = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	webhookNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
)

func (v validator) alertmanager(c *Config) {
	a := c.Alertmanager
	if a == nil {
		return
	}
	if len(a.URLs) == 0 {
		v.add("alertmanager.urls", "needs at least one Alertmanager URL")
	}
	for i, u := range a.URLs {
		v.httpURL(fmt.Sprintf("alertmanager.urls[%d]", i), u, "use alertmanager.http_config.basic_auth with a password_file")
	}
	v.httpURL("alertmanager.runbook_url", a.RunbookURL, "it is a link people follow")
	if a.ResendInterval >= 5*time.Minute {
		v.add("alertmanager.resend_interval", "%s is not shorter than Alertmanager's default resolve_timeout (5m): alerts would resolve between resends", dur(a.ResendInterval))
	}
	for name, value := range a.Labels {
		p := "alertmanager.labels." + name
		switch {
		case !labelNameRE.MatchString(name):
			v.add(p, "%q is not a Prometheus label name", name)
		case slices.Contains(reservedLabels, name):
			v.add(p, "is set by watchdogd on every alert")
		case value == "":
			v.add(p, "is empty; an empty label is no label")
		}
	}
	for kind, s := range a.Severity {
		p := "alertmanager.severity." + string(kind)
		if !kind.Known() {
			v.add(p, "unknown finding kind (known: %s)", model.KindNames())
		} else if s == "" {
			v.add(p, "is empty")
		}
	}
	h := a.HTTPConfig
	if h.BasicAuth != nil && h.BasicAuth.Username != "" && h.BasicAuth.UsernameFile != "" {
		v.add("alertmanager.http_config.basic_auth.username_file", "set both username and username_file; choose one")
	}
	if h.ProxyURL != "" {
		v.httpURL("alertmanager.http_config.proxy_url", h.ProxyURL, "proxy credentials are not supported")
	}
	if h.BasicAuth != nil && h.Authorization != nil {
		v.add("alertmanager.http_config.authorization", "set basic_auth or authorization, not both")
		return
	}
	common := h.Common()
	if err := common.Validate(); err != nil {
		v.add("alertmanager.http_config", "%v", err)
	}
}

func (v validator) webhooks(c *Config) {
	seen := map[string]bool{}
	for i, w := range c.Webhooks {
		p := fmt.Sprintf("webhooks[%d]", i)
		switch {
		case w.Name == "":
			v.add(p+".name", "is required")
		case !webhookNameRE.MatchString(w.Name):
			v.add(p+".name", "%q is not a name of lowercase letters, digits, - and _", w.Name)
		case seen[w.Name]:
			v.add(p+".name", "%q names another webhook too", w.Name)
		}
		seen[w.Name] = true
		v.httpURL(p+".url", w.URL, "the receiver checks the signature instead")
		if w.SecretFile == "" {
			v.add(p+".secret_file", "is required: every request is signed")
		}
	}
}

// outletStep checks a step's outlet: its block exists, and a webhook step
// names one webhook.
func (v validator) outletStep(c *Config, path string, s model.Step) {
	switch {
	case s.Action == model.ActionAlertmanager && c.Alertmanager == nil:
		v.add(path+".action", "alertmanager steps need an alertmanager: block")
	case s.Action == model.ActionWebhook && len(c.Webhooks) == 0:
		v.add(path+".action", "webhook steps need a webhooks: list")
	case s.Action == model.ActionWebhook && s.Webhook == "":
		v.add(path+".webhook", "is required: there are %d webhooks", len(c.Webhooks))
	case s.Action == model.ActionWebhook && !slices.ContainsFunc(c.Webhooks, func(w Webhook) bool { return w.Name == s.Webhook }):
		v.add(path+".webhook", "%q is not one of webhooks' names", s.Webhook)
	case s.Action != model.ActionWebhook && s.Webhook != "":
		v.add(path+".webhook", "only a webhook step names a webhook")
	}
}
