package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

var order = []string{"definitions import", "apply", "definitions read without record", "definitions read", "no-op plan", "teardown plan", "exact reads", "replace plan", "validate", "validate changed", "diff", "lint", "route", "graph"}

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

// planRead says how mqctl's plans read the vhost on RabbitMQ version, as
// an administrator without the queues' statistics (broker.ReadTopology).
func planRead(version string) string {
	v, err := rmqversion.Parse(version)
	if err == nil && v.StreamsDefinitions() {
		return "its definitions export, GET /api/definitions/{vhost}, streamed from 4.3.3 on, with its exchange listing beside it (the export leaves internal exchanges out, the ownership record among them): the same read the ratio is taken against"
	}
	return "its per-kind lists (queues without statistics, exchanges, bindings by source exchange, policies, operator policies), at once: the definitions export is the slower read before 4.3.3"
}

func markdown(rows []row, version string, offline bool) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# mqctl benchmark\n\nMade by `make bench` on %s.\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&sb, "- Machine: %s\n", machine())
	if !offline {
		fmt.Fprintf(&sb, "- Broker: RabbitMQ %s on the same machine (scripts/broker), one node\n", version)
	}
	sb.WriteString("- Topology: n working queues, each with its own DLQ and one topic binding (2n queues, 2n bindings, 2 exchanges)\n")
	sb.WriteString("- Offline commands pinned to one core (GOMAXPROCS=1, taskset); apply and plan use both cores, like the broker\n")
	if !offline {
		var loads []string
		for _, r := range rows {
			if r.Load != [2]float64{} {
				loads = append(loads, fmt.Sprintf("%d objects %.1f → %.1f", r.Objects, r.Load[0], r.Load[1]))
			}
		}
		if len(loads) > 0 {
			fmt.Fprintf(&sb, "- Machine load (1-minute load average at the start and the end of each size's broker measures; other work shares the machine): %s\n", strings.Join(loads, ", "))
		}
		sb.WriteString("- definitions read: one GET /api/definitions/{vhost} of the applied vhost, mqctl's ownership record included; without record: the same read with the record exchange taken out\n")
		fmt.Fprintf(&sb, "- mqctl's plans read the vhost from %s\n", planRead(version))
	}
	sb.WriteString("\n")
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
	if !offline {
		sb.WriteString("\n" + issueTargets(rows))
		sb.WriteString("\n" + preflightTargets(rows))
	}
	sb.WriteString("\n" + flowTargets(rows))
	check := func(name, measured string, ok bool) {
		fmt.Fprintf(&sb, "| %s | %s | %s |\n", name, measured, met(ok))
	}
	if len(rows) >= 2 {
		sb.WriteString("\n## Growth\n\n| target | measured | met |\n|---|---|---|\n")
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
			case "definitions import", "definitions read", "definitions read without record":
				fmt.Fprintf(&sb, "| %s | %.2f× | the broker's own (reference) |\n", what, g)
			case "no-op plan":
				// A no-op plan is mostly one definitions read: it cannot grow
				// slower than the broker answers it.
				r := growth(a, b, "definitions read without record")
				check(what+", or no faster than the definitions read it waits on", fmt.Sprintf("%.2f× (read %.2f×)", g, r), g <= 1.5 || g <= 1.2*r)
			default:
				check(what, fmt.Sprintf("%.2f×", g), g <= 1.5)
			}
		}
	}
	sb.WriteString("\nTime per object growing by at most 1.5× from one size to the next counts as linear; a quadratic step would grow it by the size ratio.\n")
	sb.WriteString("Quick measures are medians of several runs (7 below 20,000 objects, 3 above); apply and the definitions import take turns, 3 times each up to 20,000 objects (their medians are reported, every run in results.json), once each above. Peak memory is the largest max RSS of the runs.\n")
	sb.WriteString("\n![time against size](results.svg)\n")
	return sb.String()
}

// seconds renders runs as "1.20 / 1.31 / 1.25".
func seconds(runs []float64) string {
	parts := make([]string, len(runs))
	for i, x := range runs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " / ")
}

// millis lists runs to the millisecond.
func millis(runs []float64) string {
	parts := make([]string, len(runs))
	for i, x := range runs {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, " / ")
}

// growth is how much the time per object of measure k grows from a to b.
func growth(a, b row, k string) float64 {
	return (b.M[k].Seconds / float64(b.Objects)) / (a.M[k].Seconds / float64(a.Objects))
}

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// issueTargets is the table of issue 11's targets (for RabbitMQ 4.3
// restated by issue 19), each with the figures of this run it is judged
// on.
func issueTargets(rows []row) string {
	var sb strings.Builder
	sb.WriteString("## Targets (issue 11; on RabbitMQ 4.3, issue 19)\n\n| target | objects | measured | met |\n|---|---:|---|---|\n")
	line := func(target string, objects int, measured, verdict string) {
		n := "—"
		if objects > 0 {
			n = strconv.Itoa(objects)
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", target, n, measured, verdict)
	}
	ratio := func(r row, a, b string) (float64, string) {
		x := r.M[a].Seconds / r.M[b].Seconds
		return x, fmt.Sprintf("%.2f× (%.2f s ÷ %.2f s)", x, r.M[a].Seconds, r.M[b].Seconds)
	}
	for _, r := range rows {
		x, m := ratio(r, "no-op plan", "definitions read without record")
		verdict := met(x <= 1.3)
		if r.Objects < 10000 {
			verdict = "(the target is set at 10k and 50k)"
		}
		line("no-op plan ≤ 1.3× one definitions read without mqctl's record", r.Objects, m, verdict)
	}
	for _, r := range rows {
		x, m := ratio(r, "teardown plan", "no-op plan")
		line("a plan deleting every object ≤ 4× the no-op plan", r.Objects, m, met(x <= 4))
	}
	for _, r := range rows {
		x, m := ratio(r, "apply", "definitions import")
		if a, i := r.M["apply"].Runs, r.M["definitions import"].Runs; len(a) > 1 {
			m = fmt.Sprintf("%s, medians of %d runs taking turns: apply %s s, import %s s", m, len(a), seconds(a), seconds(i))
		}
		line("fresh apply ≤ 1.0× the definitions import", r.Objects, m, met(x <= 1.0))
	}
	big := false
	for _, r := range rows {
		if r.Objects < 50000 {
			continue
		}
		big = true
		peak, which := 0.0, ""
		for _, k := range []string{"no-op plan", "teardown plan", "replace plan"} {
			if r.M[k].RSSMB > peak {
				peak, which = r.M[k].RSSMB, k
			}
		}
		line("50k objects planned in < 100 MB (peak of the no-op, teardown and replace plans)", r.Objects, fmt.Sprintf("%.0f MB (%s)", peak, which), met(peak < 100))
	}
	if !big {
		line("50k objects planned in < 100 MB", 0, "not measured in this run (no size of 50k objects)", "—")
	}
	for _, r := range rows {
		if r.DefinitionsBytes == 0 {
			continue
		}
		x := float64(r.RecordBytes) / float64(r.DefinitionsBytes)
		note := ""
		if r.RecordOutOfExport {
			note = "; the export leaves the record out (an internal exchange): its size as the exchange listing gives it"
		}
		line("ownership record ≤ 10% of the vhost's definitions", r.Objects,
			fmt.Sprintf("%.1f%% (%s ÷ %s%s)", 100*x, bytesText(r.RecordBytes), bytesText(r.DefinitionsBytes), note), met(x <= 0.10))
	}
	sb.WriteString("\nFor information, not targets:\n\n| measure | objects | ratio |\n|---|---:|---|\n")
	for _, r := range rows {
		_, m := ratio(r, "no-op plan", "definitions read")
		fmt.Fprintf(&sb, "| no-op plan ÷ one definitions read with the record | %d | %s |\n", r.Objects, m)
	}
	for _, r := range rows {
		_, m := ratio(r, "replace plan", "no-op plan")
		fmt.Fprintf(&sb, "| replace-everything plan ÷ no-op plan | %d | %s |\n", r.Objects, m)
	}
	for _, r := range rows {
		if r.M["exact reads"].Seconds == 0 {
			continue
		}
		_, m := ratio(r, "exact reads", "no-op plan")
		fmt.Fprintf(&sb, "| exact reads of every queue (what a teardown plan asks of the broker) ÷ no-op plan | %d | %s |\n", r.Objects, m)
	}
	for _, r := range rows {
		t, a, b := r.M["teardown plan"].Seconds, r.M["no-op plan"].Seconds, r.M["exact reads"].Seconds
		if b == 0 {
			continue
		}
		fmt.Fprintf(&sb, "| teardown plan ÷ (no-op plan + exact reads of every queue) | %d | %.2f× (%.2f s ÷ (%.2f s + %.2f s)) |\n", r.Objects, t/(a+b), t, a, b)
	}
	// The two plan targets together bound the teardown plan by the read:
	// no-op ≤ 1.3× read and teardown ≤ 4× no-op leave it 5.2× the read.
	// Where the exact reads alone (the broker's own answer for each
	// queue, which the plan needs to say what is at stake) take longer,
	// the two targets cannot both be met in this run, however fast the
	// rest of the plan.
	for _, r := range rows {
		e, d := r.M["exact reads"].Seconds, r.M["definitions read without record"].Seconds
		if e == 0 || d == 0 {
			continue
		}
		fit := "the two targets could both be met"
		if e > 4*1.3*d {
			fit = "**more than both targets leave the whole teardown plan**: they cannot both be met"
		}
		fmt.Fprintf(&sb, "| exact reads of every queue ÷ one definitions read without the record, against the 5.2× (4 × 1.3) that the no-op and teardown targets together leave a teardown plan | %d | %.2f× (%.2f s ÷ %.2f s): %s |\n", r.Objects, e/d, e, d, fit)
	}
	sb.WriteString("\nThe read without the record is of the same vhost in the same moment: the harness takes the record exchange " +
		"out (DELETE /api/exchanges/…/mqctl.ownership.N), reads the definitions and declares the record again as it was, " +
		"between two no-op plans; each following plan must be empty, which checks that the record came back whole. " +
		"The record's size is what it adds to GET /api/definitions/{vhost} (with it minus without it), against the size without it; " +
		"RabbitMQ 4.3 leaves internal exchanges, the record among them, out of that export (both reads are then of the same document), " +
		"and the record's size is that of its exchange objects as GET /api/exchanges/{vhost} gives them. " +
		"The exact reads are what a plan that deletes or replaces queues asks of the broker for the messages at stake: " +
		"a passive declare of each of the vhost's queues over AMQP, through the plan's own code, as many at a time as the plan reads " +
		"(engine.StakeReaders), timed by the harness alone.\n")
	return sb.String()
}

// flowTargets is the table of issue 22's target: a flow diff of two files
// that differ by one binding takes at most 2× the time of validate of both.
func flowTargets(rows []row) string {
	var sb strings.Builder
	sb.WriteString("## Flow diff (issue 22)\n\n`mqctl diff OLD NEW` of the generated file and a copy with one binding's key changed, against `validate` of each.\n\n| target | objects | measured | met |\n|---|---:|---|---|\n")
	for _, r := range rows {
		d, v, w := r.M["diff"].Seconds, r.M["validate"].Seconds, r.M["validate changed"].Seconds
		x := d / (v + w)
		verdict := met(x <= 2)
		if r.Objects < 10000 {
			verdict = "(the target is set at 10k)"
		}
		fmt.Fprintf(&sb, "| flow diff ≤ 2× validate of both files | %d | %.2f× (%.3f s ÷ (%.3f s + %.3f s)) | %s |\n", r.Objects, x, d, v, w, verdict)
	}
	return sb.String()
}

// preflightTargets is the table of issue 20's targets: apply's preflight
// (each new shape declared in a throwaway vhost first) costs at most 10%
// of a fresh apply and of a change of one object, each against the same
// apply with --no-preflight, in the same run, taking turns.
func preflightTargets(rows []row) string {
	var sb strings.Builder
	sb.WriteString("## Preflight (issue 20)\n\n| target | objects | with the preflight | without | cost | met |\n|---|---:|---|---|---|---|\n")
	n := 0
	for _, r := range rows {
		for _, k := range []struct{ with, target string }{
			{"apply", "fresh apply: preflight ≤ 10%"},
			{"1-object change (new shape)", "one more queue of a shape the vhost lacks (apply's first write, alone, is its own trial: no throwaway vhost): preflight ≤ 10%"},
			{"1-object change (held shape)", "one more queue of a shape the vhost holds (nothing to try): preflight ≤ 10%"},
			{"2-object change (new shapes)", "two more queues of shapes the vhost lacks (one throwaway vhost, two declarations)"},
		} {
			with, without := r.M[k.with], r.M[k.with+" without preflight"]
			if with.Seconds == 0 || without.Seconds == 0 {
				continue
			}
			n++
			cost := with.Seconds/without.Seconds - 1
			verdict := met(cost <= 0.10)
			if strings.HasPrefix(k.with, "2-object") {
				verdict = "(no target: what the throwaway vhost costs)"
			}
			fmt.Fprintf(&sb, "| %s | %d | %.3f s (%s) | %.3f s (%s) | %+.1f%% (%+.0f ms) | %s |\n", k.target, r.Objects,
				with.Seconds, millis(with.Runs), without.Seconds, millis(without.Runs), 100*cost, 1000*(with.Seconds-without.Seconds), verdict)
		}
	}
	if n == 0 {
		return ""
	}
	sb.WriteString("\nMedians of runs taking turns (every run listed). The preflight is measured up to 20,000 objects; a change of one object is measured against the applied topology, which the file applied again restores after each run.\n")
	return sb.String()
}

func bytesText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func isLive(k string) bool {
	switch k {
	case "definitions import", "apply", "definitions read", "definitions read without record", "no-op plan", "teardown plan", "exact reads", "replace plan":
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
