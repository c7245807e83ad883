package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a-h/templ"
	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/markdown"
	"github.com/resolute-ml/resolute/views"
)

// Limits of what an experiment's page edits.
const (
	maxNotesBytes = 64 << 10
	maxLabelChars = 255
	maxLabels     = 50
)

// isHTMX says whether htmx sent the request, which then gets a fragment.
func isHTMX(r *http.Request) bool { return r.Header.Get("HX-Request") != "" }

// editableExperiment loads the experiment of {id} and the form of a request
// that edits it; only its owner or an administrator may.
func (s *Server) editableExperiment(r *http.Request) (resolute.Experiment, error) {
	e, err := s.experimentParam(r)
	if err == nil {
		err = mayChangeExperiment(r, e)
	}
	if err == nil {
		err = parseForm(r)
	}
	return e, err
}

// handleExperimentNotesForm serves POST /experiments/{id}/notes (notes):
// the notes tab's editor. htmx gets the notes section; a plain form post
// goes back to the tab. Bad notes come back with their error, as 400.
func (s *Server) handleExperimentNotesForm(w http.ResponseWriter, r *http.Request) {
	e, err := s.editableExperiment(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	notes := strings.ReplaceAll(r.PostFormValue("notes"), "\r\n", "\n")
	err = checkNotes(notes)
	if err == nil {
		err = s.db.SetExperimentNotes(r.Context(), e.ID, notes)
	}
	n := views.ExperimentNotes{ExperimentID: e.ID, Source: notes, HTML: markdown.ToHTML(notes), CanChange: true}
	switch resolute.ErrorCode(err) {
	case "":
		if !isHTMX(r) {
			redirect(w, r, experimentPath(e.ID)+"?tab=notes", "ok", "Saved the notes.")
			return
		}
		s.render(w, r, http.StatusOK, views.ExperimentNotesView(n))
	case resolute.EInvalid:
		n.HTML, n.Editing, n.Errors = markdown.ToHTML(e.Notes), true, views.FormErrors{"notes": resolute.ErrorMessage(err)}
		if isHTMX(r) {
			s.render(w, r, http.StatusBadRequest, views.ExperimentNotesView(n))
			return
		}
		p, perr := s.experimentPage(r, e, "notes")
		if perr != nil {
			s.error(w, r, perr)
			return
		}
		p.Notes = &n
		clearFlash(w, r)
		s.render(w, r, http.StatusBadRequest, views.ExperimentView(p))
	default:
		s.error(w, r, err)
	}
}

func checkNotes(notes string) error {
	switch {
	case len(notes) > maxNotesBytes:
		return resolute.Errorf(resolute.EInvalid, "notes: must be at most %d bytes, got %d", maxNotesBytes, len(notes))
	case !utf8.ValidString(notes) || strings.ContainsRune(notes, 0):
		return resolute.Errorf(resolute.EInvalid, "notes: must be UTF-8 text without NUL characters")
	}
	return nil
}

// handleExperimentLabelForm serves POST /experiments/{id}/labels/add and
// /labels/remove (label): the header's labels, edited in place.
func (s *Server) handleExperimentLabelForm(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e, err := s.editableExperiment(r)
		if err != nil {
			s.error(w, r, err)
			return
		}
		label := strings.TrimSpace(r.PostFormValue("label"))
		labels := e.Labels
		err = checkLabel(label)
		if err == nil && add && !slices.Contains(labels, label) && len(labels) >= maxLabels {
			err = resolute.Errorf(resolute.EInvalid, "label: an experiment has at most %d labels", maxLabels)
		}
		if err == nil && add {
			labels, err = s.db.AddExperimentLabel(r.Context(), e.ID, label)
		} else if err == nil {
			labels, err = s.db.RemoveExperimentLabel(r.Context(), e.ID, label)
		}
		ed := s.experimentEdit(e)
		ed.Labels = labels
		switch resolute.ErrorCode(err) {
		case "":
			if !isHTMX(r) {
				redirect(w, r, experimentPath(e.ID), "ok", "Saved the labels.")
				return
			}
			s.render(w, r, http.StatusOK, views.ExperimentLabelsBody(ed, true))
		case resolute.EInvalid:
			ed.Label, ed.Errors = r.PostFormValue("label"), views.FormErrors{"label": resolute.ErrorMessage(err)}
			s.renderEditRefused(w, r, e, ed, views.ExperimentLabelsBody(ed, true))
		default:
			s.error(w, r, err)
		}
	}
}

func checkLabel(label string) error {
	switch {
	case label == "":
		return resolute.Errorf(resolute.EInvalid, "label: must not be empty")
	case utf8.RuneCountInString(label) > maxLabelChars:
		return resolute.Errorf(resolute.EInvalid, "label: must be at most %d characters", maxLabelChars)
	case !utf8.ValidString(label) || strings.ContainsAny(label, "\x00\n\r\t"):
		return resolute.Errorf(resolute.EInvalid, "label: must be text without control characters")
	}
	return nil
}

// renderEditRefused answers a refused header edit with 400: htmx gets the
// editor's fragment, a plain post the whole page with the error beside the
// field.
func (s *Server) renderEditRefused(w http.ResponseWriter, r *http.Request, e resolute.Experiment, ed views.ExperimentEdit, fragment templ.Component) {
	if isHTMX(r) {
		s.render(w, r, http.StatusBadRequest, fragment)
		return
	}
	p, err := s.experimentPage(r, e, views.ExperimentTabs[0].Key)
	if err != nil {
		s.error(w, r, err)
		return
	}
	p.Live.Edit = ed
	clearFlash(w, r)
	s.render(w, r, http.StatusBadRequest, views.ExperimentView(p))
}

// handleExperimentSchedulingForm serves POST /experiments/{id}/scheduling
// (priority, weight, max_slots): what the Job Queue edits, from the
// experiment's header. Empty priority and weight stay as they are; an empty
// max_slots means no limit.
func (s *Server) handleExperimentSchedulingForm(w http.ResponseWriter, r *http.Request) {
	e, err := s.editableExperiment(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if resolute.Terminal(e.State) {
		s.error(w, r, resolute.Errorf(resolute.EConflict, "experiment %d is %s; the scheduling of an experiment that ended cannot change", e.ID, e.State))
		return
	}
	u, maxSlots, err := readSchedulingForm(r, e)
	if err == nil && (u.Priority != nil || u.Weight != nil) {
		me, _ := userFrom(r)
		err = s.updateQueueAs(r.Context(), me, []resolute.QueueControl{u})
	}
	if err == nil {
		err = s.db.SetExperimentMaxSlots(r.Context(), e.ID, maxSlots)
	}
	if err == nil {
		s.exps.Wake()
		e, err = s.db.Experiment(r.Context(), e.ID)
	}
	ed := s.experimentEdit(e)
	switch resolute.ErrorCode(err) {
	case "":
		if !isHTMX(r) {
			redirect(w, r, experimentPath(e.ID), "ok", "Saved the scheduling.")
			return
		}
		ed.Errors = views.FormErrors{"ok": "Saved."}
		s.render(w, r, http.StatusOK, views.ExperimentSchedulingBody(ed, true))
	case resolute.EInvalid:
		msg := resolute.ErrorMessage(err)
		field, _, _ := strings.Cut(msg, ":")
		if field != "priority" && field != "weight" && field != "max_slots" {
			field = "priority"
		}
		ed.Priority, ed.Weight, ed.MaxSlots = r.PostFormValue("priority"), r.PostFormValue("weight"), r.PostFormValue("max_slots")
		ed.Errors = views.FormErrors{field: msg}
		s.renderEditRefused(w, r, e, ed, views.ExperimentSchedulingBody(ed, true))
	default:
		s.error(w, r, err)
	}
}

// readSchedulingForm reads and checks the scheduling form: the queue
// changes that differ from e, and the slot limit.
func readSchedulingForm(r *http.Request, e resolute.Experiment) (resolute.QueueControl, *int, error) {
	u := resolute.QueueControl{JobID: "experiment-" + itoa(e.ID)}
	if v := strings.TrimSpace(r.PostFormValue("priority")); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 99 {
			return u, nil, resolute.Errorf(resolute.EInvalid, "priority: expected a whole number from 1 to 99, got %q", v)
		}
		if e.Priority == nil || *e.Priority != p {
			u.Priority = &p
		}
	}
	if v := strings.TrimSpace(r.PostFormValue("weight")); v != "" {
		wt, err := strconv.ParseFloat(v, 64)
		if err != nil || !(wt > 0) || wt > 1e6 {
			return u, nil, resolute.Errorf(resolute.EInvalid, "weight: expected a number more than 0, got %q", v)
		}
		if wt != e.Weight {
			u.Weight = &wt
		}
	}
	var maxSlots *int
	if v := strings.TrimSpace(r.PostFormValue("max_slots")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return u, nil, resolute.Errorf(resolute.EInvalid, "max_slots: expected a whole number of at least 1, or nothing for no limit; got %q", v)
		}
		maxSlots = &n
	}
	return u, maxSlots, nil
}

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
	req.UserID = func() int64 { me, _ := userFrom(r); return me.ID }()
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
		fork, err = s.exps.Create(r.Context(), req)
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
	if c.ConfigYAML, err = jsonToYAML(e.Config); err != nil {
		return nil, err
	}
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
