package definitions

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
)

// importOfTwice is what RabbitMQ's definitions import does with an object
// a file lists twice (the same kind, vhost and name).
type importOfTwice int

const (
	// importsEither: the import adds the objects of the kind concurrently
	// (rabbit_definitions concurrent_for_all, on a pool of workers, at
	// v3.10.8, v4.0.5 and v4.3.5), each only when it does not exist yet,
	// so which entry the broker keeps is not defined. Measured on 3.10.8,
	// 4.0.5 and 4.3.6, five imports each: a queue kept its first entry in
	// 14 of 15, an exchange its second in 3 of 5 on 4.3.6, a vhost and a
	// permission either, with no error.
	importsEither importOfTwice = iota
	// importsLast: the import sets the objects of the kind one after the
	// other (sequential_for_all: policies and runtime parameters, operator
	// policies and shovels among them), and a later one replaces an
	// earlier: the broker keeps the last entry (measured: always).
	importsLast
	// importFails: the import adds users concurrently, and the second add
	// of the same user fails (user_already_exists): RabbitMQ refuses the
	// file (HTTP 400) once it has imported the users and before anything
	// else, whether or not the entries differ. Measured on 3.10.8, 4.0.5
	// and 4.3.6: 29 of 30 imports failed, and the one that did not kept
	// the last entry.
	importFails
)

// importOf is what RabbitMQ's import does with two entries of kind k.
func importOf(k kind.Kind) importOfTwice {
	switch {
	case k == kind.User:
		return importFails
	case slices.Contains(kind.PolicyKinds(), k):
		return importsLast
	case k == kind.Vhost, k == kind.Exchange, k == kind.Queue, k == kind.Permission, k == kind.TopicPermission:
		return importsEither
	}
	return importsLast // the runtime parameters: shovels, federation upstreams and sets
}

// hidesValues: the entries of kind k hold secrets (kind.Spec.Secret: a
// user's password or hash, a shovel's or upstream's URI credentials), so
// their values are not shown when two differ: only the fields that
// differ are named.
func hidesValues(k kind.Kind) bool { return len(kind.SecretFields(k)) > 0 }

// twice warns of object what (of kind k), listed by first and again by
// second: whether the two differ and how, which of them RabbitMQ's import
// keeps (or that it refuses the file), and which mqctl keeps. It returns
// true when mqctl keeps the second.
func (r *reader) twice(k kind.Kind, what string, first, second *object) (keepSecond bool) {
	diffs := entryDiffs(first.m, second.m, hidesValues(k))
	how := "identically"
	if len(diffs) > 0 {
		how = "and the entries differ (" + strings.Join(diffs, "; ") + ")"
	}
	at := fmt.Sprintf("%s is listed twice, at %s and %s, %s", what, first.pos, second.pos, how)
	switch importOf(k) {
	case importFails:
		r.rep.warnf("%s: RabbitMQ's import almost always refuses this file (HTTP 400 user_already_exists: it adds the users concurrently, and the second add of %s fails, whether or not the entries differ), after the users and before any vhost, queue or other object; mqctl kept the last, at %s. Remove one of them",
			at, what, second.pos)
		return true
	case importsLast:
		if len(diffs) == 0 {
			return true
		}
		r.rep.warnf("%s: RabbitMQ's import sets %s one after the other, so the last, at %s, replaces the first; mqctl kept it too. Remove the entry you do not mean",
			at, k.Plural(), second.pos)
		return true
	}
	if len(diffs) == 0 {
		return false
	}
	r.rep.warnf("%s: RabbitMQ's import adds %s concurrently and keeps whichever entry it adds first, which is not defined (either one, from one import to the next), and ignores the other; mqctl kept the first, at %s. Remove the entry you do not mean",
		at, k.Plural(), first.pos)
	return false
}

// entryDiffs says how two entries a and b of a definitions file differ:
// each field (and each key of a field that is an object, such as
// arguments, definition or a parameter's value) that only one has or that
// they give different values, as "arguments.x-max-length 10, then 20";
// only the field's name when hide is set.
func entryDiffs(a, b map[string]any, hide bool) []string {
	var out []string
	for _, f := range slices.Sorted(maps.Keys(union(a, b))) {
		av, aok := a[f]
		bv, bok := b[f]
		am, aIsMap := av.(map[string]any)
		bm, bIsMap := bv.(map[string]any)
		if (aIsMap || av == nil) && (bIsMap || bv == nil) && (aIsMap || bIsMap) {
			for _, k := range slices.Sorted(maps.Keys(union(am, bm))) {
				av, aok := am[k]
				bv, bok := bm[k]
				if d, differ := fieldDiff(f+"."+k, av, aok, bv, bok, hide); differ {
					out = append(out, d)
				}
			}
			continue
		}
		if d, differ := fieldDiff(f, av, aok, bv, bok, hide); differ {
			out = append(out, d)
		}
	}
	return out
}

func union(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// fieldDiff renders field f's two values (ok: the entry has it) when they
// differ.
func fieldDiff(f string, a any, aok bool, b any, bok bool, hide bool) (string, bool) {
	as, bs := jsonText(a, aok), jsonText(b, bok)
	if as == bs {
		return "", false
	}
	if hide {
		return f, true
	}
	return fmt.Sprintf("%s %s, then %s", f, as, bs), true
}

func jsonText(v any, ok bool) string {
	if !ok {
		return "absent"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
