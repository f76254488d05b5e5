package main

// What `chemmy load -metrics` reads from the /metrics of the stack (chemmy
// run -metrics-addr serves every service's, with the store counters of
// each, and the process's) or of each service.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// sample is what `chemmy load` reads from one metrics endpoint.
type sample struct {
	cpu     float64            // process_cpu_seconds_total
	commits map[string]float64 // chemmy_store_commits_total by db
	fsyncs  map[string]float64 // chemmy_store_fsyncs_total by db
	// published: chemmy_outbox_published_total by db (events published)
	published map[string]float64
}

// scrape reads a Prometheus text exposition from url.
func scrape(ctx context.Context, url string) (sample, error) {
	s := sample{commits: map[string]float64{}, fsyncs: map[string]float64{}, published: map[string]float64{}}
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	if !strings.HasSuffix(url, "/metrics") {
		url = strings.TrimSuffix(url, "/") + "/metrics"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return s, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body, s)
}

// parseMetrics reads the samples load needs from a text exposition.
func parseMetrics(r io.Reader, s sample) (sample, error) {
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		labels := ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			if j := strings.IndexByte(line, '}'); j > i {
				name, labels, rest = line[:i], line[i+1:j], strings.TrimSpace(line[j+1:])
			}
		}
		v, err := strconv.ParseFloat(strings.Fields(rest + " x")[0], 64)
		if err != nil {
			continue
		}
		db := ""
		for _, l := range strings.Split(labels, ",") {
			if k, val, ok := strings.Cut(l, "="); ok && k == "db" {
				db = strings.Trim(val, `"`)
			}
		}
		switch name {
		case "process_cpu_seconds_total":
			s.cpu, found = v, true
		case "chemmy_store_commits_total":
			s.commits[db] += v
		case "chemmy_store_fsyncs_total":
			s.fsyncs[db] += v
		case "chemmy_outbox_published_total":
			if s.published != nil {
				s.published[db] += v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	if !found && len(s.fsyncs) == 0 {
		return s, errors.New("no process or store metrics")
	}
	return s, nil
}
