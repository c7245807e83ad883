package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/views"
)

// handleExperimentForkForm serves POST /experiments/{id}/fork (yaml,
// continue_trial): a new experiment with the edited config and this one's
// code; with a trial, its trials start from that trial's latest checkpoint.
func (s *Server) handleExperimentForkForm(w http.ResponseWriter, r *http.Request) {
	e, err := s.experimentParam(r)
	if err == nil {
		err = parseForm(r)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	yaml := r.PostFormValue("yaml")
	req := control.CreateRequest{ConfigYAML: yaml, Template: e.Template, ParentID: &e.ID}
	var continueID int64
	if v := r.PostFormValue("continue_trial"); v != "" {
		continueID, err = strconv.ParseInt(v, 10, 64)
		if err != nil {
			err = resolute.Errorf(resolute.EInvalid, "continue_trial: expected a trial id, got %q", v)
		}
		var t resolute.Trial
		if err == nil {
			t, err = s.db.Trial(r.Context(), continueID)
		}
		switch {
		case err != nil && resolute.ErrorCode(err) == resolute.ENotFound, err == nil && t.ExperimentID != e.ID:
			err = resolute.Errorf(resolute.EInvalid, "continue_trial: trial %d is not a trial of experiment %d", continueID, e.ID)
		case err == nil && t.LatestCheckpoint == "":
			err = resolute.Errorf(resolute.EInvalid, "continue_trial: trial %d has no checkpoint to continue from", continueID)
		}
		req.Overrides = []string{"searcher.source_trial_id=" + itoa(continueID)}
	}
	var fork resolute.Experiment
	if err == nil {
		fork, err = s.svc.Experiments.Create(r.Context(), actorFrom(r), req)
	}
	switch resolute.ErrorCode(err) {
	case "":
		redirect(w, r, experimentPath(fork.ID), "ok", "Created experiment "+itoa(fork.ID)+", forked from "+itoa(e.ID)+".")
	case resolute.EInvalid, resolute.ENotFound, resolute.EConflict, resolute.ETooLarge:
		p, perr := s.experimentPage(r, e, "configuration")
		if perr != nil {
			s.error(w, r, perr)
			return
		}
		p.Config.ForkYAML, p.Config.ContinueID = yaml, continueID
		field := "yaml"
		if strings.HasPrefix(resolute.ErrorMessage(err), "continue_trial: ") {
			field = "continue_trial"
		}
		p.Config.Errors = views.FormErrors{field: resolute.ErrorMessage(err)}
		clearFlash(w, r)
		s.render(w, r, http.StatusUnprocessableEntity, views.ExperimentView(p))
	default:
		s.error(w, r, err)
	}
}

// experimentConfig is the configuration tab.
func (s *Server) experimentConfig(r *http.Request, e resolute.Experiment) (*views.ExperimentConfig, error) {
	c := &views.ExperimentConfig{ExperimentID: e.ID, Template: e.Template}
	var err error
	if c.OriginalYAML, err = s.db.ExperimentOriginalConfig(r.Context(), e.ID); err != nil {
		return nil, err
	}
	// Shown and forked masked: a fork's Create takes the parent's secrets
	// back where the fork leaves them masked.
	c.OriginalYAML = expconf.MaskYAML(c.OriginalYAML)
	if c.ConfigYAML, err = expconf.OrderedYAML(resolute.MaskConfig(e.Config), c.OriginalYAML); err != nil {
		return nil, err
	}
	c.Unused = expconf.UnusedOn(s.cfg.Master.ResourceManager)
	c.ForkYAML = c.OriginalYAML
	trials, err := s.db.Trials(r.Context(), e.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range trials {
		if t.LatestCheckpoint != "" {
			c.Continuable = append(c.Continuable, t)
		}
	}
	// ?continue=N: the fork continues trial N, as Determined's "continue
	// trial": its hyperparameters, one trial, from its latest checkpoint.
	if v := r.URL.Query().Get("continue"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		i := slices.IndexFunc(c.Continuable, func(t resolute.Trial) bool { return t.ID == id })
		if err != nil || i < 0 {
			return nil, resolute.Errorf(resolute.EInvalid, "continue: expected a trial of experiment %d with a checkpoint, got %q", e.ID, v)
		}
		metric, smaller := searcherMetric(e.Config)
		if c.ForkYAML, err = continueYAML(c.OriginalYAML, c.Continuable[i].Hparams, metric, smaller); err != nil {
			return nil, err
		}
		c.ContinueID = id
	}
	return c, nil
}

// continueYAML turns a submitted config into one that trains a trial on:
// its hyperparameters as constants and a single-trial searcher on the same
// metric (keeping a max_length). The rest stays as it was written.
func continueYAML(original string, hparams json.RawMessage, metric string, smallerIsBetter bool) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(original), &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", resolute.Errorf(resolute.EInvalid, "continue: the submitted config is not a YAML map")
	}
	root := doc.Content[0]
	var hp yaml.Node
	if err := yaml.Unmarshal(hparams, &hp); err != nil || len(hp.Content) == 0 {
		return "", fmt.Errorf("reading the trial's hyperparameters: %w", err)
	}
	searcher := &yaml.Node{Kind: yaml.MappingNode}
	add := func(m *yaml.Node, k string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	add(searcher, "name", &yaml.Node{Kind: yaml.ScalarNode, Value: "single"})
	add(searcher, "metric", &yaml.Node{Kind: yaml.ScalarNode, Value: metric})
	add(searcher, "smaller_is_better", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(smallerIsBetter)})
	if old := mapValue(root, "searcher"); old != nil {
		if ml := mapValue(old, "max_length"); ml != nil {
			add(searcher, "max_length", ml)
		}
	}
	var block func(n *yaml.Node)
	block = func(n *yaml.Node) {
		n.Style = 0 // the encoder still quotes strings that would read as another type
		for _, c := range n.Content {
			block(c)
		}
	}
	block(hp.Content[0])
	setMapValue(root, "hyperparameters", hp.Content[0])
	setMapValue(root, "searcher", searcher)
	var out strings.Builder
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", fmt.Errorf("writing the config: %w", err)
	}
	return out.String(), nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setMapValue(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}
