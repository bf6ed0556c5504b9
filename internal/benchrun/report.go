package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

var order = []string{"definitions import", "apply", "definitions read", "no-op plan", "teardown plan", "replace plan", "validate", "lint", "route", "graph"}

func write(dir string, rows []row, version string, offline bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{"machine": machine(), "rabbitmq": version, "rows": rows}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.svg"), []byte(plot(rows)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(markdown(rows, version, offline)), 0o644)
}

func markdown(rows []row, version string, offline bool) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# mqctl benchmark\n\nMade by `make bench` on %s.\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&sb, "- Machine: %s\n", machine())
	if !offline {
		fmt.Fprintf(&sb, "- Broker: RabbitMQ %s on the same machine (scripts/broker), one node\n", version)
	}
	sb.WriteString("- Topology: n working queues, each with its own DLQ and one topic binding (2n queues, 2n bindings, 2 exchanges)\n")
	sb.WriteString("- Offline commands pinned to one core (GOMAXPROCS=1, taskset); apply and plan use both cores, like the broker\n\n")
	sb.WriteString("Seconds (peak memory in MB)\n\n| objects | queues | bindings |")
	for _, k := range order {
		if offline && isLive(k) {
			continue
		}
		fmt.Fprintf(&sb, " %s |", k)
	}
	sb.WriteString("\n|---:|---:|---:|")
	for _, k := range order {
		if offline && isLive(k) {
			continue
		}
		sb.WriteString("---:|")
	}
	sb.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %d | %d | %d |", r.Objects, r.Queues, r.Bindings)
		for _, k := range order {
			if offline && isLive(k) {
				continue
			}
			m := r.M[k]
			if m.RSSMB > 0 {
				fmt.Fprintf(&sb, " %.2f (%.0f) |", m.Seconds, m.RSSMB)
			} else {
				fmt.Fprintf(&sb, " %.2f |", m.Seconds)
			}
		}
		sb.WriteString("\n")
	}
	sb.WriteString("\n## Targets\n\n| target | measured | met |\n|---|---|---|\n")
	check := func(name, measured string, ok bool) {
		mark := "yes"
		if !ok {
			mark = "**no**"
		}
		fmt.Fprintf(&sb, "| %s | %s | %s |\n", name, measured, mark)
	}
	if !offline {
		for _, r := range rows {
			a := r.M["apply"].Seconds / r.M["definitions import"].Seconds
			check(fmt.Sprintf("fresh apply within 1.2× of the definitions import (%d objects)", r.Objects), fmt.Sprintf("%.2f×", a), a <= 1.2)
		}
		for _, r := range rows {
			p := r.M["no-op plan"].Seconds / r.M["definitions read"].Seconds
			check(fmt.Sprintf("no-op plan within 1.5× of one definitions read (%d objects)", r.Objects), fmt.Sprintf("%.2f×", p), p <= 1.5)
		}
		for _, r := range rows {
			t := r.M["teardown plan"].Seconds / r.M["no-op plan"].Seconds
			check(fmt.Sprintf("a plan deleting every object within 4× the no-op plan (%d objects)", r.Objects), fmt.Sprintf("%.2f×", t), t <= 4)
		}
		last := rows[len(rows)-1]
		check(fmt.Sprintf("%d objects planned in under 100 MB", last.Objects), fmt.Sprintf("%.0f MB", last.M["no-op plan"].RSSMB), last.M["no-op plan"].RSSMB < 100)
	}
	if len(rows) >= 2 {
		a, b := rows[len(rows)-2], rows[len(rows)-1]
		for _, k := range order {
			if offline && isLive(k) {
				continue
			}
			if a.M[k].Seconds < 0.05 {
				continue // too short to tell growth from noise
			}
			g := growth(a, b, k)
			what := fmt.Sprintf("%s grows linearly (time per object, %d vs %d objects)", k, b.Objects, a.Objects)
			switch k {
			case "definitions import", "definitions read":
				fmt.Fprintf(&sb, "| %s | %.2f× | the broker's own (reference) |\n", what, g)
			case "no-op plan":
				// A no-op plan is mostly one definitions read: it cannot grow
				// slower than the broker answers it.
				r := growth(a, b, "definitions read")
				check(what+", or no faster than the definitions read it waits on", fmt.Sprintf("%.2f× (read %.2f×)", g, r), g <= 1.5 || g <= 1.2*r)
			default:
				check(what, fmt.Sprintf("%.2f×", g), g <= 1.5)
			}
		}
	}
	sb.WriteString("\nTime per object growing by at most 1.5× from one size to the next counts as linear; a quadratic step would grow it by the size ratio.\n")
	sb.WriteString("Quick measures are medians of several runs (7 below 20,000 objects, 3 above); apply and the definitions import run once each. Peak memory is the largest max RSS of the runs.\n")
	sb.WriteString("\n![time against size](results.svg)\n")
	return sb.String()
}

// growth is how much the time per object of measure k grows from a to b.
func growth(a, b row, k string) float64 {
	return (b.M[k].Seconds / float64(b.Objects)) / (a.M[k].Seconds / float64(a.Objects))
}

func isLive(k string) bool {
	switch k {
	case "definitions import", "apply", "definitions read", "no-op plan", "teardown plan", "replace plan":
		return true
	}
	return false
}

// plot draws time against size, both on log scales, one line per measure.
func plot(rows []row) string {
	const w, h, left, right, top, bottom = 760.0, 460.0, 70.0, 200.0, 20.0, 50.0
	var keys []string
	for _, k := range order {
		for _, r := range rows {
			if r.M[k].Seconds > 0 {
				keys = append(keys, k)
				break
			}
		}
	}
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		minX, maxX = math.Min(minX, float64(r.Objects)), math.Max(maxX, float64(r.Objects))
		for _, k := range keys {
			if s := r.M[k].Seconds; s > 0 {
				minY, maxY = math.Min(minY, s), math.Max(maxY, s)
			}
		}
	}
	if len(rows) == 0 || math.IsInf(minY, 0) {
		return `<svg xmlns="http://www.w3.org/2000/svg"/>`
	}
	lx0, lx1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	ly0, ly1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	px := func(x float64) float64 { return left + (math.Log10(x)-lx0)/(lx1-lx0)*(w-left-right) }
	py := func(y float64) float64 { return h - bottom - (math.Log10(y)-ly0)/(ly1-ly0)*(h-top-bottom) }
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for e := lx0; e <= lx1; e++ {
		x := px(math.Pow(10, e))
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, top, x, h-bottom, x, h-bottom+16, human(math.Pow(10, e)))
	}
	for e := ly0; e <= ly1; e++ {
		y := py(math.Pow(10, e))
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%gs</text>`+"\n", left, y, w-right, y, left-6, y+4, math.Pow(10, e))
	}
	fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" text-anchor="middle">objects (log scale)</text>`+"\n", (left+w-right)/2, h-12)
	fmt.Fprintf(&sb, `<text x="14" y="%.1f" transform="rotate(-90 14 %.1f)" text-anchor="middle">seconds (log scale)</text>`+"\n", (top+h-bottom)/2, (top+h-bottom)/2)
	sorted := append([]row(nil), rows...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Objects < sorted[j].Objects })
	for i, k := range keys {
		c := colors[i%len(colors)]
		var pts []string
		for _, r := range sorted {
			if s := r.M[k].Seconds; s > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(float64(r.Objects)), py(s)))
			}
		}
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(&sb, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], c)
		}
		ly := top + 10 + float64(i)*18
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/><text x="%.1f" y="%.1f">%s</text>`+"\n", w-right+10, ly, w-right+30, ly, c, w-right+36, ly+4, k)
	}
	sb.WriteString("</svg>\n")
	return sb.String()
}

func human(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%gM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%gk", x/1e3)
	}
	return fmt.Sprintf("%g", x)
}
