package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/prereq"
)

// prometheusServer is a real Prometheus (Debian package prometheus) started
// by startPrometheus.
type prometheusServer struct {
	url string // http://127.0.0.1:PORT
}

// prometheusConfig scrapes the targets of a job every 3 s, each scrape
// given as long (a scrape's timeout can't exceed its interval: at 1 s, a
// CoreDNS under the race detector on a loaded machine answered none in
// time, and Prometheus held no series at all), and evaluates the rule file
// every second.
const prometheusConfig = `global:
  scrape_interval: 3s
  scrape_timeout: 3s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: %s
    static_configs:
      - targets: [%s]
`

// startPrometheus starts Prometheus on a free loopback port, scraping the
// targets (host:port, their /metrics) as job and evaluating the rules of
// ruleFile, with its data in t's temporary directory (startProgram), and
// waits until it is ready.
func startPrometheus(t *testing.T, job string, targets []string, ruleFile string) *prometheusServer {
	t.Helper()
	bin := prereq.Program(t, "prometheus", "prometheus")
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, fmt.Appendf(nil, prometheusConfig, ruleFile, job, `"`+strings.Join(targets, `", "`)+`"`), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := corednstest.FreeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	prom := startProgram(t, "prometheus", exec.Command(bin,
		"--config.file="+config,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
	), dir)
	p := &prometheusServer{url: "http://" + addr}
	prom.awaitReady(t, time.Minute, func() error { return p.get("/-/ready", nil, nil) })
	return p
}

// get GETs path with the query parameters params from p, and decodes its
// JSON answer into v, unless v is nil. It fails on a status other than 200
// OK.
func (p *prometheusServer) get(path string, params url.Values, v any) error {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(p.url + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if v == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// scrapeErrors returns the last error of each target whose last scrape
// failed, for the message of a test that finds no series.
func (p *prometheusServer) scrapeErrors() []string {
	var r struct {
		Data struct {
			ActiveTargets []struct {
				ScrapeURL string `json:"scrapeUrl"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/targets", nil, &r); err != nil {
		return []string{err.Error()}
	}
	var errs []string
	for _, target := range r.Data.ActiveTargets {
		if target.LastError != "" {
			errs = append(errs, target.ScrapeURL+": "+target.LastError)
		}
	}
	return errs
}

// query evaluates the PromQL expression expr at the present and returns
// how many series its result holds, or Prometheus's error.
func (p *prometheusServer) query(expr string) (int, error) {
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/query", url.Values{"query": {expr}}, &r); err != nil {
		return 0, fmt.Errorf("%s: %w", expr, err)
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s: %s", expr, r.Error)
	}
	return len(r.Data.Result), nil
}

// ruleHealth is the health of a rule as Prometheus evaluated it.
type ruleHealth struct {
	Name           string    `json:"name"`
	Health         string    `json:"health"`
	LastError      string    `json:"lastError"`
	LastEvaluation time.Time `json:"lastEvaluation"`
}

// rules returns the health of every rule Prometheus loaded.
func (p *prometheusServer) rules() ([]ruleHealth, error) {
	var r struct {
		Data struct {
			Groups []struct {
				Rules []ruleHealth `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/rules", nil, &r); err != nil {
		return nil, err
	}
	var rules []ruleHealth
	for _, g := range r.Data.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules, nil
}

// evaluated returns an error until Prometheus has evaluated each of its
// rules at least once, and fails t for each it evaluated with an error.
func (p *prometheusServer) evaluated(t *testing.T) error {
	t.Helper()
	rules, err := p.rules()
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		return fmt.Errorf("no rules loaded")
	}
	for _, r := range rules {
		if r.LastEvaluation.IsZero() {
			return fmt.Errorf("%s is not evaluated yet", r.Name)
		}
		if r.Health != "ok" {
			t.Errorf("rule %s: %s %s", r.Name, r.Health, r.LastError)
		}
	}
	return nil
}
