package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"
	"github.com/mqctl/mqctl/pkg/definitions"
)

// fileSecrets are the secrets of a definitions file, from its JSON: every
// user's password hash, and the credentials (user:password@) of every URI
// of a runtime parameter.
func fileSecrets(data []byte) (hashes, creds []string) {
	var doc map[string]any
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &doc) != nil {
		return nil, nil
	}
	users, _ := doc["users"].([]any)
	for _, u := range users {
		m, _ := u.(map[string]any)
		if h, _ := m["password_hash"].(string); len(h) >= 8 {
			hashes = append(hashes, h)
		}
	}
	cred := regexp.MustCompile(`://([^/@\s"]+:[^/@\s"]+)@`)
	params, _ := doc["parameters"].([]any)
	for _, p := range params {
		b, _ := json.Marshal(p)
		for _, m := range cred.FindAllStringSubmatch(string(b), -1) {
			creds = append(creds, m[1]+"@")
		}
	}
	return hashes, creds
}

// TestCorpusSecrets: no password hash or URI credential of a corpus file
// appears in what export --from shows of it: the export (with and without
// sugar), the variables it lists, validate --expanded's masked form, the
// report, or the errors of a file mqctl refuses; every password the export
// writes is a ${VAR} placeholder.
func TestCorpusSecrets(t *testing.T) {
	t.Parallel()
	_, files := corpus.Files(t)
	var nHashes, nCreds int
	passwordLine := regexp.MustCompile(`(?m)^\s*password: (.*)$`)
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(path)
		hashes, creds := fileSecrets(data)
		if len(hashes)+len(creds) == 0 {
			continue
		}
		nHashes += len(hashes)
		nCreds += len(creds)
		t.Run(base, func(t *testing.T) {
			var outputs []string
			top, rep, err := definitions.Read(base, data)
			if err != nil {
				outputs = append(outputs, "error: "+err.Error())
			} else {
				outputs = append(outputs, "report: "+strings.Join(rep.Lines(), "\n"))
				for _, opts := range []Options{{Sugar: true}, {}, {MaskSecrets: true}} {
					var buf bytes.Buffer
					if err := WriteYAML(&buf, top, opts); err != nil {
						t.Fatal(err)
					}
					out := buf.String()
					outputs = append(outputs, fmt.Sprintf("export %+v: %s", opts, out))
					for _, m := range passwordLine.FindAllStringSubmatch(out, -1) {
						if v := m[1]; !(opts.MaskSecrets && v == `'***'`) && !(strings.HasPrefix(v, `"${`) && strings.HasSuffix(v, `}"`)) {
							t.Errorf("export %+v writes a password that is not a placeholder: %s", opts, m[0])
						}
					}
				}
				var vars strings.Builder
				for _, v := range Variables(top) {
					fmt.Fprintf(&vars, "%s: %s\n", v.Name, v.What)
				}
				outputs = append(outputs, "variables: "+vars.String())
			}
			for _, out := range outputs {
				for _, s := range append(append([]string{}, hashes...), creds...) {
					if strings.Contains(out, s) {
						t.Errorf("a secret of the file appears in %.40q…", out)
					}
				}
			}
		})
	}
	if nHashes == 0 {
		t.Fatal("no corpus file holds a password hash: the test proves nothing")
	}
	t.Logf("checked %d password hashes and %d URI credentials", nHashes, nCreds)
}
