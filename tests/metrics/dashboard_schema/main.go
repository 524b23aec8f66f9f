// Command ballast-dashboard-schema decodes Grafana dashboards with Grafana's
// schema library, strictly (a required field missing, a field of the wrong
// type or one the schema does not know is a problem), and runs the library's
// validation on them. Each panel's options and each query are decoded by the
// plugin the panel's type and the query's data source name, so a panel type or
// data source the library does not know would go unchecked: that is a problem
// too. A panel's fieldConfig, which the dashboard's decoder reads leniently
// but for its `custom` part, is decoded strictly on its own as well.
//
//	usage: ballast-dashboard-schema DASHBOARD.json...
//
// Prints every problem as `FILE: PATH: WHAT` (PATH a JSON path from the
// dashboard's root, $) and a summary line per file; exits 1 when any
// file has a problem, 2 on bad usage.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// problem is one finding in one dashboard.
type problem struct {
	path    string
	message string
}

// flatten turns an error of the library into problems: a cog.BuildErrors is
// a list with a path each (an empty list is success), anything else (the
// JSON decoder's errors) is one problem at the root.
func flatten(err error) []problem {
	if err == nil {
		return nil
	}
	var list cog.BuildErrors
	if errors.As(err, &list) {
		problems := make([]problem, 0, len(list))
		for _, e := range list {
			problems = append(problems, reword(e.Path, e.Message))
		}
		return problems
	}
	var one *cog.BuildError
	if errors.As(err, &one) {
		return []problem{reword(one.Path, one.Message)}
	}
	return []problem{{"$", err.Error()}}
}

var (
	// The library names an unknown field at the path of the object that holds
	// it, ending in that object's Go type ("panels[0].options.Options").
	unexpectedField = regexp.MustCompile(`^unexpected field '(.*)'$`)
	// encoding/json's type errors name the Go type that was expected.
	mistyped = regexp.MustCompile(`cannot unmarshal (\w+) into Go (?:value|struct field \S+) of type (\S+)`)
)

// reword gives a problem of the library a JSON path from the dashboard's
// root ($) and says what was expected.
func reword(path, message string) problem {
	if m := unexpectedField.FindStringSubmatch(message); m != nil {
		parent := ""
		if dot := strings.LastIndex(path, "."); dot >= 0 {
			parent = path[:dot]
		}
		return problem{join(parent, m[1]), "unexpected field: the schema has no such field here"}
	}
	if m := mistyped.FindStringSubmatch(message); m != nil {
		return problem{join(path, ""), "expected a value of type " + m[2] + ", got a JSON " + m[1]}
	}
	return problem{join(path, ""), message}
}

// join makes "$.parent.field" of a path of the library and a field name.
func join(parent, field string) string {
	path := "$"
	for _, part := range []string{parent, field} {
		if part != "" {
			path += "." + part
		}
	}
	return path
}

// rawPanel is what the coverage check reads of a panel: its type, its
// fieldConfig, its queries' data sources and, for a row, the panels it holds.
type rawPanel struct {
	Type        string          `json:"type"`
	FieldConfig json.RawMessage `json:"fieldConfig"`
	Targets     []struct {
		Datasource *struct {
			Type string `json:"type"`
		} `json:"datasource"`
	} `json:"targets"`
	Panels []rawPanel `json:"panels"`
}

// queryType is the data source type of every query: Prometheus, whose
// queries the library decodes strictly (a type it has no query schema for
// would be decoded as an untyped bag). The shipped dashboards use no other.
const queryType = "prometheus"

// coverage finds what the dashboard's strict decoding passes over: panel
// types and queries without a schema, and unknown or mistyped fields of
// fieldConfig.
func coverage(raw []byte) []problem {
	var doc struct {
		Panels []rawPanel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return []problem{{"$", err.Error()}}
	}
	var problems []problem
	var walk func(panels []rawPanel, prefix string)
	walk = func(panels []rawPanel, prefix string) {
		for i, panel := range panels {
			path := prefix + "[" + strconv.Itoa(i) + "]"
			if panel.Type != "row" {
				if _, found := cog.ConfigForPanelcfgVariant(panel.Type); !found {
					problems = append(problems, problem{path + ".type",
						fmt.Sprintf("panel type %q has no schema in the library: its options would go unchecked", panel.Type)})
				}
			}
			if panel.FieldConfig != nil {
				var source dashboard.FieldConfigSource
				for _, p := range flatten(source.UnmarshalJSONStrict(panel.FieldConfig)) {
					problems = append(problems, problem{path + ".fieldConfig" + strings.TrimPrefix(p.path, "$"), p.message})
				}
			}
			for j, target := range panel.Targets {
				if target.Datasource == nil || target.Datasource.Type != queryType {
					problems = append(problems, problem{path + ".targets[" + strconv.Itoa(j) + "].datasource.type",
						"expected " + strconv.Quote(queryType) + ", whose queries the library decodes strictly"})
				}
			}
			walk(panel.Panels, path+".panels")
		}
	}
	walk(doc.Panels, "$.panels")
	return problems
}

// check returns every problem of one dashboard file.
func check(file string) []problem {
	raw, err := os.ReadFile(file)
	if err != nil {
		return []problem{{"$", err.Error()}}
	}
	var board dashboard.Dashboard
	problems := flatten(board.UnmarshalJSONStrict(raw))
	problems = append(problems, flatten(board.Validate())...)
	return append(problems, coverage(raw)...)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ballast-dashboard-schema DASHBOARD.json...")
		os.Exit(2)
	}
	plugins.RegisterDefaultPlugins()
	failed := 0
	for _, file := range os.Args[1:] {
		problems := check(file)
		for _, p := range problems {
			fmt.Printf("%s: %s: %s\n", file, p.path, p.message)
		}
		if len(problems) > 0 {
			failed++
			fmt.Printf("FAIL: %s: %d problems\n", file, len(problems))
		} else {
			fmt.Printf("ok: %s: decoded strictly and valid\n", file)
		}
	}
	if failed > 0 {
		fmt.Printf("FAIL: %d of %d dashboards do not pass Grafana's schema\n", failed, len(os.Args)-1)
		os.Exit(1)
	}
	fmt.Printf("ok: %d dashboards pass Grafana's schema\n", len(os.Args)-1)
}
