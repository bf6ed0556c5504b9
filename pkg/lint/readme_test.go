package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestReadmeListsEveryRule: README's table of lint rules has a row for
// each analyzer of the catalogue, with its default severity first, and no
// row for a rule that does not exist.
func TestReadmeListsEveryRule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| (MQ\d{3}) \| ([a-z]+)`).FindAllStringSubmatch(string(data), -1) {
		rows[m[1]] = m[2]
	}
	var ids []string
	for _, a := range Builtin().Analyzers() {
		ids = append(ids, a.ID)
		sev, ok := rows[a.ID]
		switch {
		case !ok:
			t.Errorf("README's lint table has no row for %s (%s)", a.ID, a.Name)
		case sev != a.Severity.String():
			t.Errorf("README says %s is %s by default; the catalogue says %s", a.ID, sev, a.Severity)
		}
	}
	for id := range rows {
		if !slices.Contains(ids, id) {
			t.Errorf("README lists %s, which is no rule", id)
		}
	}
}
