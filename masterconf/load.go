package masterconf

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// EnvPrefix starts every environment variable that overrides a key:
// RESOLUTE_DB_HOST overrides db.host.
const EnvPrefix = "RESOLUTE_"

// ErrHelp is returned when -h or --help was asked for; usage was printed.
var ErrHelp = flag.ErrHelp

// Load reads the configuration: defaults, then the file named by --config
// (if any), then RESOLUTE_* variables, then flags. Every scalar key has a
// flag named after its path: --port, --data-dir, --db-host, --log-level.
func Load(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	cfg := Default()
	paths := leaves(reflect.TypeOf(cfg), "")

	fs := flag.NewFlagSet("resolute", flag.ContinueOnError)
	fs.SetOutput(usage)
	configPath := fs.String("config", "", "path of master.yaml")
	flagValues := map[string]*string{}
	for _, p := range paths {
		flagValues[p] = fs.String(flagName(p), "", "overrides "+p+" (env "+envName(p)+")")
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q; the server takes only flags", fs.Arg(0))
	}

	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if *configPath != "" {
		data, err := os.ReadFile(*configPath)
		if err != nil {
			return cfg, fmt.Errorf("read config: %w", err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return cfg, fmt.Errorf("%s: %w", *configPath, err)
		}
		if len(doc.Content) > 0 && doc.Content[0].Kind == yaml.MappingNode {
			root = doc.Content[0]
		} else if len(doc.Content) > 0 && doc.Content[0].Tag != "!!null" {
			return cfg, fmt.Errorf("%s: expected a map of keys at the top level", *configPath)
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, p := range paths {
		if v := getenv(envName(p)); v != "" {
			setScalar(root, strings.Split(p, "."), v)
		}
	}
	for _, p := range paths {
		if set[flagName(p)] {
			setScalar(root, strings.Split(p, "."), *flagValues[p])
		}
	}

	var errs Errors
	decode(root, reflect.ValueOf(&cfg).Elem(), "", &errs)
	cfg.File = *configPath
	if cfg.CheckpointStorage == nil {
		// Like Determined's default master.yaml: checkpoints on this machine.
		cfg.CheckpointStorage = map[string]any{"type": "shared_fs", "host_path": filepath.Join(cfg.DataDir, "checkpoints")}
	}
	if len(errs) == 0 {
		errs = cfg.validate()
	}
	if len(errs) > 0 {
		where := "configuration"
		if *configPath != "" {
			where = *configPath
		}
		return cfg, fmt.Errorf("%s:\n%w", where, errs)
	}
	return cfg, nil
}

// IsHelp reports whether err is the request for usage.
func IsHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }

func flagName(path string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(path)
}

func envName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_").Replace(path))
}

// setScalar puts value at path in a mapping node, making maps on the way; the
// value is read as a YAML scalar, so "8081" becomes a number where one is
// expected.
func setScalar(m *yaml.Node, path []string, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != path[0] {
			continue
		}
		if len(path) == 1 {
			m.Content[i+1] = scalar(value)
			return
		}
		if m.Content[i+1].Kind != yaml.MappingNode {
			m.Content[i+1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		setScalar(m.Content[i+1], path[1:], value)
		return
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}
	if len(path) == 1 {
		m.Content = append(m.Content, key, scalar(value))
		return
	}
	child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, key, child)
	setScalar(child, path[1:], value)
}

func scalar(v string) *yaml.Node {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(v), &n); err == nil && len(n.Content) == 1 && n.Content[0].Kind == yaml.ScalarNode {
		return n.Content[0]
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}
