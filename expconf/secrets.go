package expconf

import (
	"bytes"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
)

// MaskYAML returns a config's YAML (as a user wrote it, comments and all)
// with the secrets of its checkpoint_storage masked as
// resolute.MaskStorage masks them. YAML it cannot read comes back as
// nothing but a comment saying so, never unmasked.
func MaskYAML(src string) string {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return "# the config cannot be shown: it is not valid YAML\n"
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return src
	}
	changed := false
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "checkpoint_storage" || root.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		cs := root.Content[i+1]
		for j := 0; j+1 < len(cs.Content); j += 2 {
			v := cs.Content[j+1]
			if resolute.IsStorageSecret(cs.Content[j].Value) && !(v.Kind == yaml.ScalarNode && (v.Value == "" || v.Value == resolute.Masked || v.Tag == "!!null")) {
				cs.Content[j+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: resolute.Masked, Style: yaml.DoubleQuotedStyle}
				changed = true
			}
		}
	}
	if !changed {
		return src
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "# the config cannot be shown\n"
	}
	return b.String()
}

// Unmask puts back in cs the secrets that a fork's config left masked (it
// was made from a masked config), from the parent's storage when that is
// the same storage (type, bucket or container); a masked secret with no
// such parent is an error, so that "********" is never used as a secret.
func (cs *CheckpointStorageConfig) Unmask(parent *CheckpointStorageConfig) error {
	if cs == nil {
		return nil
	}
	same := parent != nil && parent.Type == cs.Type
	fill := func(key string, dst *string, from string) error {
		if *dst != resolute.Masked {
			return nil
		}
		if !same || from == "" {
			return Errors{{Path: "checkpoint_storage." + key, Message: "is masked (" + resolute.Masked + "): give the secret, or leave the key out to use the environment's credentials"}}
		}
		*dst = from
		return nil
	}
	var errs []error
	switch {
	case cs.S3 != nil:
		var p S3Storage
		if same && parent.S3 != nil && parent.S3.Bucket == cs.S3.Bucket && parent.S3.EndpointURL == cs.S3.EndpointURL {
			p = *parent.S3
		}
		errs = append(errs, fill("access_key", &cs.S3.AccessKey, p.AccessKey), fill("secret_key", &cs.S3.SecretKey, p.SecretKey))
	case cs.Azure != nil:
		var p AzureStorage
		if same && parent.Azure != nil && parent.Azure.Container == cs.Azure.Container && parent.Azure.AccountURL == cs.Azure.AccountURL {
			p = *parent.Azure
		}
		errs = append(errs, fill("connection_string", &cs.Azure.ConnectionString, p.ConnectionString),
			fill("credential", &cs.Azure.Credential, p.Credential))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// UnmaskYAML puts back into a config's YAML, edited from a masked copy
// (MaskYAML) of old, the secrets of old's checkpoint_storage that it leaves
// as the mask; src as it is when there are none.
func UnmaskYAML(src, old string) string {
	var doc, prev yaml.Node
	if yaml.Unmarshal([]byte(src), &doc) != nil || yaml.Unmarshal([]byte(old), &prev) != nil {
		return src
	}
	storage := func(n *yaml.Node) *yaml.Node {
		if len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
			return nil
		}
		root := n.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "checkpoint_storage" && root.Content[i+1].Kind == yaml.MappingNode {
				return root.Content[i+1]
			}
		}
		return nil
	}
	cs, was := storage(&doc), storage(&prev)
	if cs == nil || was == nil {
		return src
	}
	changed := false
	for j := 0; j+1 < len(cs.Content); j += 2 {
		key, v := cs.Content[j].Value, cs.Content[j+1]
		if !resolute.IsStorageSecret(key) || v.Kind != yaml.ScalarNode || v.Value != resolute.Masked {
			continue
		}
		for k := 0; k+1 < len(was.Content); k += 2 {
			if was.Content[k].Value == key && was.Content[k+1].Kind == yaml.ScalarNode && was.Content[k+1].Value != resolute.Masked {
				cs.Content[j+1] = was.Content[k+1]
				changed = true
			}
		}
	}
	if !changed {
		return src
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if enc.Encode(&doc) != nil {
		return src
	}
	return b.String()
}
