package loader

import (
	"strings"
	"testing"
)

// TestErrorsShowNoSecret: no error or warning of the loader shows a secret
// written in the file (a password or URI whose ${ is no reference, a
// tagged password) or a value taken from the environment, in any field:
// each names its position, and a value from the environment by its
// ${VAR}. Each file is read by the fast path and by the library's.
func TestErrorsShowNoSecret(t *testing.T) {
	const secret = "Xq7-s3cret-Value"
	tests := []struct {
		name string
		src  string
		env  []string
		want string // part of the error text
	}{
		{"a password with an unclosed ${", secretsFile(`password: "`+secret+`${"`, ""), nil, "t.yaml:7:15: a ${ in this value is not closed"},
		{"a password with a ${ that is no reference", secretsFile(`password: "${`+secret+`}"`, ""), nil, "t.yaml:7:15: a ${…} in this value is no variable reference"},
		{"a password with a ${ in its middle", secretsFile(`password: "ab${x-`+secret+`}"`, ""), nil, "t.yaml:7:15: a ${…} in this value is no variable reference"},
		{"a tagged password", secretsFile(`password: !vault `+secret, ""), nil, "t.yaml:7:15: unsupported YAML tag !vault"},
		{"a URI with an unclosed ${", secretsFile("password: ${PW}", `shovels: { s: { src-uri: "amqp://u:`+secret+`${@h/v", src-queue: q, dest-uri: "amqp:///v", dest-queue: q } }`),
			[]string{"PW", "x"}, "t.yaml:5:30: a ${ in this value is not closed"},
		{"a URI from the environment given to the wrong field", secretsFile("password: ${PW}", `federation_upstreams: { up: { uri: "amqp:///v", expires: "${UP_URI}" } }`),
			[]string{"PW", "x", "UP_URI", "amqp://u:" + secret + "@h/v"}, "expires: expected an integer of at least 1, got string ${UP_URI} (its value not shown)"},
		{"a value from the environment in a bad enum", secretsFile("password: ${PW}", `exchanges: { x: { type: "${XT}" } }`),
			[]string{"PW", "x", "XT", secret}, `exchange "x": type: invalid value ${XT} (its value not shown)`},
		{"a value from the environment inside a longer one", secretsFile("password: ${PW}", `default_queue_type: "x${QT}"`),
			[]string{"PW", "x", "QT", secret}, `default_queue_type: invalid value "x${QT}" (its value not shown)`},
		{"a value from the environment that is also the object's name", secretsFile("password: ${PW}", `exchanges: { xs: { type: "${XT}" } }`),
			[]string{"PW", "x", "XT", "xs"}, `exchange "xs": type: invalid value ${XT} (its value not shown)`},
		{"a value from the environment, written in a block", secretsFile("password: ${PW}", "exchanges:\n  x:\n    type: ${XT}"),
			[]string{"PW", "x", "XT", secret}, `exchange "x": type: invalid value ${XT} (its value not shown)`},
	}
	for _, tt := range tests {
		for _, path := range []string{"fast", "library"} {
			t.Run(tt.name+"/"+path, func(t *testing.T) {
				src := tt.src
				if path == "library" {
					src += "# mqctl:ignore MQ101\n" // the fast path leaves suppressions to the library
				}
				var warns []string
				_, err := LoadBytes("t.yaml", []byte(src), Options{LookupEnv: envOf(tt.env...), SecretsOptional: true,
					Warn: func(w *Error) { warns = append(warns, w.Error()) }})
				if err == nil {
					t.Fatal("no error")
				}
				all := errorLines(err) + "\n" + strings.Join(warns, "\n")
				if !strings.Contains(all, tt.want) {
					t.Errorf("errors:\n%s\nwant one containing %s", all, tt.want)
				}
				if strings.Contains(all, secret) || strings.Contains(all, secret[3:]) {
					t.Errorf("the errors show the secret:\n%s", all)
				}
			})
		}
	}
}
